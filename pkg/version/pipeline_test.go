package version_test

import (
	"context"
	"sort"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// pipelineFS is a chain of every declarative step, nested and top-level,
// whose paths do not overlap: it has a PipelinePlan.
var pipelineFS = fstest.MapFS{
	"0001_a.yaml": {Data: []byte("collections:\n  c:\n    upgrade:\n      - rename: {email: contact.email}\n      - default: {status: active, prefs.lang: en}\n")},
	"0002_b.yaml": {Data: []byte("collections:\n  c:\n    upgrade:\n      - set: {meta.note: \"$x\", flag: {a: [1, \"$y\"]}}\n      - unset: [legacy, old.gone]\n      - rename: {total: totals.gross}\n")},
}

// pipelineShapes are documents at version 0 of every shape the pipeline
// must either upgrade exactly as Go does or leave out (Eligible).
func pipelineShapes() []bson.D {
	var out []bson.D
	id := int32(0)
	add := func(fields ...bson.E) {
		id++
		out = append(out, append(bson.D{{Key: "_id", Value: id}}, fields...))
	}
	add()
	add(bson.E{Key: "email", Value: "a@x"}, bson.E{Key: "legacy", Value: 1}, bson.E{Key: "total", Value: 3.5})
	add(bson.E{Key: "email", Value: "a@x"}, bson.E{Key: "contact", Value: bson.D{{Key: "phone", Value: "1"}}})
	add(bson.E{Key: "email", Value: "a@x"}, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: "b@x"}}}) // rename onto a value: left out
	add(bson.E{Key: "email", Value: "a@x"}, bson.E{Key: "contact", Value: "str"})                                // scalar parent: left out
	add(bson.E{Key: "email", Value: "a@x"}, bson.E{Key: "contact", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}) // array parent: left out
	add(bson.E{Key: "contact", Value: nil})                                                                      // null parent: left out
	add(bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: "keep@x"}}}, bson.E{Key: "status", Value: nil})
	add(bson.E{Key: "prefs", Value: bson.D{{Key: "lang", Value: "de"}, {Key: "z", Value: 1}}}, bson.E{Key: "status", Value: "gone"})
	add(bson.E{Key: "prefs", Value: bson.D{}}, bson.E{Key: "meta", Value: bson.D{{Key: "note", Value: 1}, {Key: "k", Value: 2}}})
	add(bson.E{Key: "old", Value: bson.D{{Key: "gone", Value: 1}, {Key: "kept", Value: 2}}}, bson.E{Key: "totals", Value: bson.D{{Key: "net", Value: 2}}}, bson.E{Key: "total", Value: 9})
	add(bson.E{Key: "old", Value: "scalar"}, bson.E{Key: "totals", Value: bson.D{{Key: "gross", Value: 1}}}, bson.E{Key: "total", Value: 1}) // left out twice
	add(bson.E{Key: "email", Value: bson.D{{Key: "$weird", Value: 1}}}, bson.E{Key: "flag", Value: false})
	return out
}

// TestPipelinePlanMatchesGoMongoDB runs the pipeline plan on the real
// server over documents of every shape: each document it selects
// (Eligible) ends exactly as the Go upgrade makes it (top-level field
// order aside, as the operator updates' name order already differs), each
// other is left untouched. MongoDB's semantics: $rename is $unset then
// $set (src/mongo/db/update/rename_node.cpp), $set creates missing parents
// and refuses a scalar or null one (modifier_node.cpp), and $mergeObjects
// keeps an existing field where it stands (expression.cpp,
// ExpressionMergeObjects).
func TestPipelinePlanMatchesGoMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_pipeline", "pipeline updates need a server that has them (FerretDB v1 has none)")
	ctx := context.Background()
	reg, err := version.New(pipelineFS)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := reg.PipelinePlan("c", 0)
	if !ok {
		t.Fatal("no pipeline plan")
	}
	coll := db.Collection("c")
	docs := pipelineShapes()
	for _, d := range docs {
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	filter := bson.D{{Key: "$and", Value: bson.A{reg.VersionIs(0), p.Eligible}}}
	res, err := coll.UpdateMany(ctx, filter, p.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	upgraded := int64(0)
	for _, d := range docs {
		var got bson.D
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: d[0].Value}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		want, _, goErr := reg.Upgrade("c", d)
		if v, _ := reg.VersionOf("c", got); v == 0 {
			if sorted(got) != sorted(d) {
				t.Errorf("left-out document %v changed: %v", d, got)
			}
			continue
		}
		upgraded++
		if goErr != nil {
			t.Errorf("the pipeline upgraded %v to %v, which Go refuses: %v", d, got, goErr)
			continue
		}
		if sorted(got) != sorted(want) {
			t.Errorf("document %v:\n pipeline %v\n       go %v", d, sorted(got), sorted(want))
		}
	}
	if res.ModifiedCount != upgraded || upgraded < 6 {
		t.Errorf("modified %d, upgraded %d of %d", res.ModifiedCount, upgraded, len(docs))
	}
}

// sorted is d's extended JSON with its top-level fields in name order.
func sorted(d bson.D) string {
	c := append(bson.D{}, d...)
	sort.SliceStable(c, func(i, j int) bool { return c[i].Key < c[j].Key })
	b, _ := bson.MarshalExtJSON(c, true, false)
	return string(b)
}

// TestPipelinePlanOnlyWhereExact: chains a single pipeline cannot match
// exactly get none (the backfill then uses the client path for them).
func TestPipelinePlanOnlyWhereExact(t *testing.T) {
	for name, files := range map[string]string{
		"copy":          "      - copy: {a: b}\n",
		"overlap":       "      - set: {a: 1}\n      - rename: {a: b}\n",
		"nested prefix": "      - default: {a: {}}\n      - set: {a.b: 1}\n",
		"version field": "      - set: {version: 9}\n",
	} {
		reg, err := version.New(fstest.MapFS{"0001_a.yaml": {Data: []byte("collections:\n  c:\n    upgrade:\n" + files)}})
		if err != nil {
			t.Logf("%s: refused by the files already: %v", name, err)
			continue
		}
		if _, ok := reg.PipelinePlan("c", 0); ok {
			t.Errorf("%s: a pipeline plan", name)
		}
	}
}
