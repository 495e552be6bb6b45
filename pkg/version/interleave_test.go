package version_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestWriteBackInterleavesWithServerPlan runs a lazy read and its
// write-back at every pair of points among the statements of a server-side
// backfill (each unit's guarded update, a default's advance, the final
// update, with the filters pkg/runner sends: the version, the exact
// marker, the unit's guard), then the rest of the backfill. Whichever
// wins, the stored document ends exactly as Registry.Upgrade makes it,
// without a marker: no unit runs twice or is skipped, and no write-back
// lands on a half-upgraded document. Statement granularity is what the
// sandbox can show (FerretDB v1 updates are not atomic).
func TestWriteBackInterleavesWithServerPlan(t *testing.T) {
	ctx := context.Background()
	r, err := version.New(fstest.MapFS{
		"0001_a.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {a: b}\n      - default: {s: 1, t: 2}\n")},
		"0002_b.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - unset: [e]\n      - set: {c: 1}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	plan, ok := r.ServerPlan("users", 0)
	if !ok {
		t.Fatal("no server plan")
	}
	var stmts []stmt
	for k, u := range plan.Units {
		f := bson.A{r.VersionIs(0), plan.MarkerIs(k)}
		for _, g := range u.Guard {
			f = append(f, bson.D{g})
		}
		upd := bson.D{}
		for _, e := range u.Update {
			if e.Key == "$set" {
				e.Value = append(append(bson.D{}, e.Value.(bson.D)...), bson.E{Key: version.MarkerField, Value: plan.Marker(k + 1)})
			}
			upd = append(upd, e)
		}
		if _, has := lookupKey(upd, "$set"); !has {
			upd = append(upd, bson.E{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: plan.Marker(k + 1)}}})
		}
		stmts = append(stmts, stmt{fmt.Sprintf("unit %d", k+1), bson.D{{Key: "$and", Value: f}}, upd})
		if len(u.Guard) > 0 {
			stmts = append(stmts, stmt{fmt.Sprintf("advance %d", k+1),
				bson.D{{Key: "$and", Value: bson.A{r.VersionIs(0), plan.MarkerIs(k)}}},
				bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: plan.Marker(k + 1)}}}}})
		}
	}
	stmts = append(stmts, stmt{"final", bson.D{{Key: "$and", Value: bson.A{r.VersionIs(0), plan.MarkerIs(len(plan.Units))}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: int32(plan.To)}}}, {Key: "$unset", Value: bson.D{{Key: version.MarkerField, Value: ""}}}}})

	coll := sandboxtest.Database(t, "interleave").Collection("users")
	run := func(id int32, s stmt) {
		f := bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "_id", Value: id}}, s.filter}}}
		if _, err := coll.UpdateOne(ctx, f, s.update); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	id := int32(0)
	for _, original := range []bson.D{
		{{Key: "a", Value: "x"}, {Key: "e", Value: 1}},
		{{Key: "a", Value: "x"}, {Key: "t", Value: 9}, {Key: "e", Value: 1}},
		// No a: the first unit (the rename) changes only the marker, which
		// only the marker's own guard sees.
		{{Key: "s", Value: 0}, {Key: "e", Value: 1}},
	} {
		want, _, err := r.Upgrade("users", append(bson.D{{Key: "_id", Value: int32(-1)}}, original...))
		if err != nil {
			t.Fatal(err)
		}
		for read := 0; read <= len(stmts); read++ {
			for write := read; write <= len(stmts); write++ {
				id++
				doc := append(bson.D{{Key: "_id", Value: id}}, original...)
				if _, err := coll.InsertOne(ctx, doc); err != nil {
					t.Fatal(err)
				}
				var before bson.D
				for i, s := range stmts {
					if i == read {
						before = stored(t, coll, id)
					}
					if i == write {
						writeBack(t, r, coll, before)
					}
					run(id, s)
				}
				if read == len(stmts) {
					before = stored(t, coll, id)
				}
				if write == len(stmts) {
					writeBack(t, r, coll, before)
				}
				got := stored(t, coll, id)
				w := append(bson.D{{Key: "_id", Value: id}}, want[1:]...)
				if js(sortedD(asM(got))) != js(sortedD(asM(w))) {
					t.Errorf("%s, read before %q, written back before %q: stored %s, want %s", js(original), name(stmts, read), name(stmts, write), js(got), js(w))
				}
			}
		}
	}
}

func lookupKey(d bson.D, k string) (any, bool) {
	for _, e := range d {
		if e.Key == k {
			return e.Value, true
		}
	}
	return nil, false
}

func stored(t *testing.T, coll *mongo.Collection, id int32) bson.D {
	t.Helper()
	var d bson.D
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func writeBack(t *testing.T, r *version.Registry, coll *mongo.Collection, before bson.D) {
	t.Helper()
	up, changed, err := r.Upgrade("users", before)
	if err != nil {
		t.Fatalf("upgrade %s: %v", js(before), err)
	}
	if changed {
		if _, err := r.WriteBack(context.Background(), coll, before, up); err != nil {
			t.Fatal(err)
		}
	}
}

func asM(d bson.D) bson.M {
	b, _ := bson.Marshal(d)
	var m bson.M
	_ = bson.Unmarshal(b, &m)
	return m
}

type stmt struct {
	name           string
	filter, update bson.D
}

func name(stmts []stmt, i int) string {
	if i == len(stmts) {
		return "the end"
	}
	return stmts[i].name
}
