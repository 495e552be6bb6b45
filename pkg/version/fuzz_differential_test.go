package version_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
)

var (
	fuzzValues = []string{`1`, `"s"`, `null`, `{}`, `{"b": 1}`, `{"b": {"c": 2}}`, `[1, 2]`, `[{"b": 1}, {"c": 2}]`, `true`, `2.5`}
	fuzzPaths  = []string{"a", "a.b", "a.b.c", "b", "c", "c.d", "a.0", "a.1.b", "z"}
	fuzzOps    = []string{"set", "unset", "rename", "default"}
)

// fuzzCase builds a document and a one-step upgrade from a seed.
func fuzzCase(seed uint64) (doc bson.D, step string) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var fields []string
	for _, k := range []string{"a", "b", "c"} {
		if rng.IntN(3) > 0 {
			fields = append(fields, fmt.Sprintf("%q: %s", k, fuzzValues[rng.IntN(len(fuzzValues))]))
		}
	}
	_ = bson.UnmarshalExtJSON([]byte("{"+strings.Join(fields, ", ")+"}"), false, &doc)
	op := fuzzOps[rng.IntN(len(fuzzOps))]
	p1, p2 := fuzzPaths[rng.IntN(len(fuzzPaths))], fuzzPaths[rng.IntN(len(fuzzPaths))]
	switch op {
	case "unset":
		step = fmt.Sprintf("{unset: [%s]}", p1)
	case "rename":
		step = fmt.Sprintf("{rename: {%s: %s}}", p1, p2)
	default:
		step = fmt.Sprintf("{%s: {%s: %s}}", op, p1, fuzzValues[rng.IntN(len(fuzzValues))])
	}
	return doc, step
}

// FuzzStepDifferential applies a random declarative step to a random
// document in Go and as the server's update on the sandbox, and requires
// the same result (or both an error). Known FerretDB differences (an
// $unset of an array element) are skipped.
func FuzzStepDifferential(f *testing.F) {
	db := sandboxtest.Database(f, "fuzz")
	coll := db.Collection("diff")
	for seed := uint64(0); seed < 20; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		doc, stepSrc := fuzzCase(seed)
		m, err := migration.Parse("0001_step.yaml", []byte("collections:\n  c:\n    upgrade:\n      - "+stepSrc+"\n"))
		if err != nil {
			return // a step the file format refuses (overlapping rename, say)
		}
		step := m.Collections[0].Upgrade[0]
		if step.Op == migration.OpUnset && strings.ContainsAny(step.Fields[0].Path, "0123456789") {
			return // known sandbox difference: see knownSandboxDifferences
		}
		goRes := runGo(t, step, doc)
		id := bson.NewObjectID()
		srvRes := runServer(context.Background(), coll, id, doc, serverModels(t, step, id))
		if strings.Contains(fmt.Sprint(srvRes.err), "insert:") {
			return
		}
		if goRes.err != nil && strings.Contains(goRes.err.Error(), "cannot be an array element") && srvRes.err == nil {
			// Known sandbox difference: MongoDB's $rename refuses a source
			// or target inside an array ("The destination field cannot be
			// an array element"); FerretDB applies it. See
			// knownSandboxDifferences.
			return
		}
		if !sameOutcome(goRes, srvRes) {
			t.Fatalf("seed %d: %s on %s:\n  go:     %s\n  server: %s", seed, stepSrc, show(doc), goRes, srvRes)
		}
	})
}
