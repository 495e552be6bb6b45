package version_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestIndexedUpgradeMatchesScans: Upgrade locates top-level fields with an
// index built once per document; ApplyOne scans for them at every step.
// On random chains of steps over random documents both must give the same
// document or both fail.
func TestIndexedUpgradeMatchesScans(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 10))
	paths := []string{"a", "b", "c", "a.b", "b.c", "a.0", "c.1.b", "version", "z"}
	values := []string{`1`, `"s"`, `null`, `{b: 1}`, `[1, {b: 2}]`}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for round := 0; round < 3000; round++ {
		var steps []string
		for n := 1 + rng.IntN(6); len(steps) < n; {
			p1, p2 := pick(paths), pick(paths)
			switch rng.IntN(5) {
			case 0:
				steps = append(steps, fmt.Sprintf("- set: {%s: %s}", p1, pick(values)))
			case 1:
				steps = append(steps, fmt.Sprintf("- default: {%s: %s}", p1, pick(values)))
			case 2:
				steps = append(steps, fmt.Sprintf("- unset: [%s]", p1))
			case 3:
				if p1 != p2 && !strings.HasPrefix(p1, p2+".") && !strings.HasPrefix(p2, p1+".") {
					steps = append(steps, fmt.Sprintf("- rename: {%s: %s}", p1, p2))
				}
			default:
				if p1 != p2 && !strings.HasPrefix(p1, p2+".") && !strings.HasPrefix(p2, p1+".") {
					steps = append(steps, fmt.Sprintf("- copy: {%s: %s}", p1, p2))
				}
			}
		}
		src := "collections:\n  c:\n    upgrade:\n      " + strings.Join(steps, "\n      ") + "\n"
		r, err := version.New(fstest.MapFS{"0001_a.yaml": {Data: []byte(src)}}, version.WithField("v"))
		if err != nil {
			continue // a step the file format refuses
		}
		doc, _ := fuzzCase(rng.Uint64())
		doc = append(bson.D{{Key: "_id", Value: round}}, doc...)
		if rng.IntN(2) == 0 {
			doc = append(doc, bson.E{Key: "version", Value: 7})
		}
		indexed, _, errIndexed := r.Upgrade("c", doc)
		scanned, errScanned := r.ApplyOne("c", 1, doc)
		if errScanned == nil {
			scanned = append(scanned, bson.E{Key: "v", Value: int32(1)})
		}
		if (errIndexed != nil) != (errScanned != nil) || errIndexed == nil && js(indexed) != js(scanned) {
			t.Fatalf("%s on %s:\n indexed %s %v\n scanned %s %v", src, js(doc), js(indexed), errIndexed, js(scanned), errScanned)
		}
	}
}
