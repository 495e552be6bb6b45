package version_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// differentialDocs are documents of every awkward shape: missing fields,
// nulls, nested documents, arrays of scalars and of documents, type
// changes along a path.
var differentialDocs = []string{
	`{}`,
	`{"a": 1}`,
	`{"a": null}`,
	`{"a": {"b": 1}}`,
	`{"x": 1, "a": {"b": {"c": 1}}}`,
	`{"a": [1, 2, 3]}`,
	`{"a": [1, 2, 3], "b": 5}`,
	`{"a": [{"b": 1}, {"b": 2}]}`,
	`{"a": [{"c": 1}, 5]}`,
	`{"a": "str"}`,
	`{"a": {"b": null}, "c": []}`,
	`{"name": "n", "email": "e@x", "legacyId": 5}`,
	`{"contact": "oops", "email": "e@x"}`,
	`{"contact": {"phone": "1"}, "email": "e@x"}`,
	`{"z": 0, "a": {}, "b": 1.5}`,
	// Nested arrays ([[1], ...]) are left out: FerretDB v1 refuses to store
	// them at all ("nested arrays are not supported").
	`{"a": true, "b": {"c": [1, {"d": 2}]}}`,
	`{"x": "first", "a": {"b": 2, "k": 3}}`,
}

// differentialSteps are single steps in the file format; each runs both in
// Go and as the matching server-side update.
var differentialSteps = []string{
	`{set: {a: 5}}`,
	`{set: {a.b: 5}}`,
	`{set: {a.b.c: x}}`,
	`{set: {z: {y: 1}, n: null}}`,
	`{set: {a.1: v}}`,
	`{set: {a.5: 9}}`,
	`{set: {a.0.b: 7}}`,
	`{set: {a: [1, {b: 2}]}}`,
	`{unset: [a]}`,
	`{unset: [a.b]}`,
	`{unset: [a.1]}`,
	`{unset: [nothing, a.b.c]}`,
	`{unset: [a.0.b]}`,
	`{rename: {a: z}}`,
	`{rename: {a.b: a2}}`,
	`{rename: {email: contact.email}}`,
	`{rename: {a: b.c}}`,
	`{rename: {a.b: x}}`,
	`{rename: {x: a.b}}`,
	`{rename: {a.k: a.b}}`,
	`{rename: {b: a.0}}`,
	`{default: {a: 0}}`,
	`{default: {a.b: 0}}`,
	`{default: {status: active, a.b: 1}}`,
	`{default: {a.0.b: 1}}`,
	// Issue 15: empty operands, $-prefixed nested names, sources missing
	// past an array's end or inside an element, padding, _id.
	`{set: {}}`,
	`{unset: []}`,
	`{set: {a.$x: 1}}`,
	`{rename: {a.5: x}}`,
	`{rename: {a.1.c: x}}`,
	`{set: {a.3.b: 1}}`,
	`{set: {_id: 5}}`,
}

// knownDifference is a case where FerretDB v1.24 and MongoDB's documented
// behaviour differ. MongoDB's documentation wins: the Go result must equal
// mongo (Extended JSON of the document, or "error"), and the sandbox must
// still differ (so the entry is removed once FerretDB is fixed). Against a
// real MongoDB (MONGOMIG_TEST_URI) no difference is tolerated.
type knownDifference struct {
	reason string
	mongo  string
}

// unsetArrayElement: MongoDB's $unset of an array element sets it to null
// rather than removing it, keeping the other elements' positions
// (src/mongo/db/update/unset_node.cpp, updateExistingElement: an element
// whose parent is an array is set to null); FerretDB removes the element.
const unsetArrayElement = "$unset of an array element: MongoDB sets it to null, FerretDB removes it"

// renameIntoArray: MongoDB's $rename refuses a target inside an array
// ("The destination field cannot be an array element",
// src/mongo/db/update/rename_node.cpp; rename_node_test.cpp MoveIntoArray,
// MoveToArrayElement); FerretDB sets the element. Found by
// FuzzStepDifferential.
const renameIntoArray = "$rename into an array element: MongoDB refuses it, FerretDB applies it"

// nestedDollarField: MongoDB 5.0+ stores $-prefixed names below the top
// level (SERVER-49117, jstests/core/updateh.js: {$set: {"sneaky.$x": 1}}
// works); FerretDB v1 refuses them ("key must not start with '$' sign").
// Where $set itself would fail (a.$x through a string), both refuse.
const nestedDollarField = "a $-prefixed name below the top level: MongoDB stores it, FerretDB refuses it"

// knownSandboxStepDifferences lists steps whose every disagreement with the
// sandbox is a known FerretDB difference: there the sandbox refuses what
// Go (following MongoDB, pinned in TestMongoDBRules) applies.
var knownSandboxStepDifferences = map[string]string{
	`{set: {a.$x: 1}}`: nestedDollarField,
}

var knownSandboxDifferences = map[string]knownDifference{
	`{rename: {b: a.0}} on {"a": [1, 2, 3], "b": 5}`: {renameIntoArray, "error"},
	`{unset: [a.1]} on {"a": [1, 2, 3]}`:             {unsetArrayElement, `{"a":[1,null,3]}`},
	`{unset: [a.1]} on {"a": [{"b": 1}, {"b": 2}]}`:  {unsetArrayElement, `{"a":[{"b":1},null]}`},
	`{unset: [a.1]} on {"a": [{"c": 1}, 5]}`:         {unsetArrayElement, `{"a":[{"c":1},null]}`},
	`{unset: [a.1]} on {"a": [1, 2, 3], "b": 5}`:     {unsetArrayElement, `{"a":[1,null,3],"b":5}`},
}

func parseStep(t *testing.T, src string) migration.Step {
	t.Helper()
	file := "collections:\n  c:\n    upgrade:\n      - " + src + "\n"
	m, err := migration.Parse("0001_step.yaml", []byte(file))
	if err != nil {
		t.Fatalf("step %s: %v", src, err)
	}
	return m.Collections[0].Upgrade[0]
}

// serverModels turns a step into update models with version.ServerUpdates,
// the translation the server-side backfill uses.
func serverModels(t *testing.T, s migration.Step, id bson.ObjectID) []mongo.WriteModel {
	updates, ok := version.ServerUpdates(s)
	if !ok {
		t.Fatalf("step %s has no server-side form", s.Op)
	}
	var out []mongo.WriteModel
	for _, u := range updates {
		filter := append(bson.D{{Key: "_id", Value: id}}, u.Guard...)
		out = append(out, mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(u.Update))
	}
	return out
}

type outcome struct {
	doc bson.D
	err error
}

func (o outcome) String() string {
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	b, _ := bson.MarshalExtJSON(o.doc, false, false)
	return string(b)
}

// runServer applies the updates one by one (a failing one stops, as a
// failing update leaves the document as it was).
func runServer(ctx context.Context, coll *mongo.Collection, id bson.ObjectID, doc bson.D, models []mongo.WriteModel) outcome {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	full := append(bson.D{{Key: "_id", Value: id}}, doc...)
	if _, err := coll.InsertOne(ctx, full); err != nil {
		return outcome{err: fmt.Errorf("insert: %w", err)}
	}
	for _, m := range models {
		u := m.(*mongo.UpdateOneModel)
		if _, err := coll.UpdateOne(ctx, u.Filter, u.Update); err != nil {
			return outcome{err: err}
		}
	}
	var got bson.D
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
		return outcome{err: err}
	}
	return outcome{doc: got[1:]} // without _id, which stays first
}

func runGo(t *testing.T, step migration.Step, doc bson.D) outcome {
	t.Helper()
	m := &migration.Migration{Version: 1, File: "0001_step.yaml", Collections: []*migration.Collection{{Name: "c", Upgrade: []migration.Step{step}}}}
	reg, err := version.FromMigrations([]*migration.Migration{m})
	if err != nil {
		t.Fatal(err)
	}
	out, err := reg.ApplyOne("c", 1, doc)
	return outcome{doc: out, err: err}
}

// runGoWithID runs the step on doc stored under _id id, as the server
// holds it, and returns the result without _id, as runServer does.
func runGoWithID(t *testing.T, step migration.Step, id bson.ObjectID, doc bson.D) outcome {
	t.Helper()
	res := runGo(t, step, append(bson.D{{Key: "_id", Value: id}}, doc...))
	if res.err == nil && len(res.doc) > 0 && res.doc[0].Key == "_id" {
		res.doc = res.doc[1:]
	}
	return res
}

func sameOutcome(a, b outcome) bool {
	if (a.err != nil) != (b.err != nil) {
		return false
	}
	if a.err != nil {
		return true
	}
	ba, _ := bson.Marshal(a.doc)
	bb, _ := bson.Marshal(b.doc)
	return string(ba) == string(bb)
}

// differential compares every step on every document in Go and on db's
// server. knownDiffs are the sandbox's known differences (nil on a real
// server); lacked are the pairs decided by a rule of MongoDB's the server
// was found to break (probeServerRules), skipped where they differ.
func differential(t *testing.T, db *mongo.Database, knownDiffs map[string]knownDifference, lacked map[string]lackedRule) {
	ctx := context.Background()
	coll := db.Collection("differential")
	compared, skipped := 0, 0
	stepDiffs := map[string]int{}
	defer func() {
		for step, reason := range knownSandboxStepDifferences {
			if knownDiffs != nil && stepDiffs[step] == 0 {
				t.Errorf("%s: listed as a known sandbox difference (%s) but no document differs now; remove it", step, reason)
			}
		}
	}()
	for _, stepSrc := range differentialSteps {
		step := parseStep(t, stepSrc)
		for _, docSrc := range differentialDocs {
			var doc bson.D
			if err := bson.UnmarshalExtJSON([]byte(docSrc), false, &doc); err != nil {
				t.Fatal(err)
			}
			name := stepSrc + " on " + docSrc
			id := bson.NewObjectID()
			goRes := runGoWithID(t, step, id, doc)
			srvRes := runServer(ctx, coll, id, doc, serverModels(t, step, id))
			if known, ok := knownDiffs[name]; ok {
				skipped++
				if sameOutcome(goRes, srvRes) {
					t.Errorf("%s: listed as a known server difference (%s) but the results now agree; remove it from the list", name, known.reason)
				}
				if goRes.String() != known.mongo && !(known.mongo == "error" && goRes.err != nil) {
					t.Errorf("%s: go gives %s, MongoDB's documented result is %s (%s)", name, goRes, known.mongo, known.reason)
				}
				continue
			}
			if reason, ok := knownSandboxStepDifferences[stepSrc]; ok && knownDiffs != nil && goRes.err == nil && srvRes.err != nil {
				skipped++
				stepDiffs[stepSrc]++
				t.Logf("%s: known sandbox difference (%s)", name, reason)
				continue
			}
			if ow := (*version.OverwriteError)(nil); errors.As(goRes.err, &ow) {
				// A deliberate difference: MongoDB's $rename overwrites an
				// existing target (rename_node.cpp), a step refuses to
				// (docs/file-format.md). The raw update is not the backfill's
				// plan, which leaves such a document alone.
				skipped++
				t.Logf("%s: refused as an overwrite of %s; the raw server update gives %s", name, ow.To, srvRes)
				continue
			}
			if rule, ok := lacked[name]; ok && !sameOutcome(goRes, srvRes) {
				skipped++
				skipLackedRule(t, name, rule, doc, goRes, srvRes)
				continue
			}
			compared++
			if !sameOutcome(goRes, srvRes) {
				t.Errorf("%s:\n  go:     %s\n  server: %s", name, goRes, srvRes)
			}
		}
	}
	t.Logf("%d step/document pairs compared with the server, %d known differences checked against MongoDB's documentation or source instead", compared, skipped)
	if compared < 300 {
		t.Errorf("only %d pairs compared", compared)
	}
}

// TestDifferentialSandbox compares every declarative step with the same
// update run by the embedded sandbox.
func TestDifferentialSandbox(t *testing.T) {
	differential(t, sandboxtest.Database(t, "diff"), knownSandboxDifferences, nil)
}

// TestDifferentialMongoDB is the same comparison against a real MongoDB,
// where no difference is tolerated: on a server that breaks one of
// serverUpdateRules (found by its probe), the pairs that rule decides are
// skipped where the server differs, once Go's result is checked against
// MongoDB's.
func TestDifferentialMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_differential", "no real MongoDB to compare the declarative steps with (the sandbox comparison is TestDifferentialSandbox)")
	differential(t, db, nil, probeServerRules(t, db))
}
