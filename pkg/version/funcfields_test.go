package version_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// A function registered with version.Fields sees only its fields and _id,
// and what it returns replaces only them: every other field stays as
// stored, in its place.
func TestFuncFieldsSeesOnlyItsFields(t *testing.T) {
	var seen bson.D
	spy := func(d bson.D) (bson.D, error) {
		seen = append(bson.D(nil), d...)
		return splitName(d)
	}
	r2, err := version.New(mapFS(funcFieldsFS), version.WithFunc("splitName", spy, version.Fields("name")))
	if err != nil {
		t.Fatal(err)
	}
	doc := ext(t, `{"_id": 1, "visits": 7, "name": "Ada L", "email": "a@x", "version": 1}`)
	up, changed, err := r2.Upgrade("users", doc)
	if err != nil || !changed {
		t.Fatalf("upgrade: %v %v", changed, err)
	}
	if got := js(seen); got != `{"_id":1,"name":"Ada L"}` {
		t.Errorf("the function saw %s; want only _id and name", got)
	}
	if got := js(up); got != `{"_id":1,"visits":7,"name":{"first":"Ada","last":"L"},"email":"a@x","version":2}` {
		t.Errorf("upgraded to %s", got)
	}
}

var funcFieldsFS = map[string]string{
	"0001_base.yaml":  "collections:\n  users:\n    validator: {$jsonSchema: {bsonType: object}}\n",
	"0002_names.yaml": "collections:\n  users:\n    upgrade:\n      - func: splitName\n",
}

// A function may only change what it declared: returning another field,
// or another _id, is the step's error naming the field; Fields refuses
// names a guard could not use.
func TestFuncFieldsRefusesUndeclaredChanges(t *testing.T) {
	for name, fn := range map[string]version.Func{
		`returned field "email"`: func(d bson.D) (bson.D, error) { return append(d, bson.E{Key: "email", Value: "x"}), nil },
		"changed _id":            func(d bson.D) (bson.D, error) { d[0].Value = 2; return d, nil },
	} {
		r, err := version.New(mapFS(funcFieldsFS), version.WithFunc("splitName", fn, version.Fields("name")))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.Upgrade("users", ext(t, `{"_id": 1, "name": "Ada L", "version": 1}`))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error saying %q, got %v", name, err)
		}
	}
	for _, bad := range []string{"", "_id", "a.b", "$x"} {
		if _, err := version.New(mapFS(funcFieldsFS), version.WithFunc("splitName", splitName, version.Fields(bad))); err == nil || !strings.Contains(err.Error(), "version.Fields") {
			t.Errorf("Fields(%q): want a registration error, got %v", bad, err)
		}
	}
}

// After a function that declared its fields, a write-back guards those,
// the fields the upgrade changes and the version, not every field as read
// (DeltaFor): a writer of an unrelated field since the read no longer
// makes it match nothing; a writer of the declared field still does.
func TestFuncFieldsNarrowsTheGuard(t *testing.T) {
	ctx := context.Background()
	coll := sandboxtest.Database(t, "app").Collection("users")
	for _, tc := range []struct {
		name    string
		reads   []version.FuncOption
		writer  bson.D
		wantWon bool
	}{
		{"undeclared: an unrelated writer wins", nil, bson.D{{Key: "$inc", Value: bson.D{{Key: "visits", Value: 1}}}}, false},
		{"declared: an unrelated writer is kept", []version.FuncOption{version.Fields("name")}, bson.D{{Key: "$inc", Value: bson.D{{Key: "visits", Value: 1}}}}, true},
		{"declared: a writer of the declared field wins", []version.FuncOption{version.Fields("name")}, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "Grace H"}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := version.New(mapFS(funcFieldsFS), version.WithFunc("splitName", splitName, tc.reads...))
			if err != nil {
				t.Fatal(err)
			}
			id := bson.NewObjectID()
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Ada L"}, {Key: "visits", Value: 1}, {Key: "version", Value: 1}}); err != nil {
				t.Fatal(err)
			}
			var read bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&read); err != nil {
				t.Fatal(err)
			}
			up, _, err := r.Upgrade("users", read)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, tc.writer); err != nil {
				t.Fatal(err)
			}
			won, err := r.WriteBack(ctx, coll, read, up)
			if err != nil || won != tc.wantWon {
				t.Fatalf("write-back won %v (%v); want %v", won, err, tc.wantWon)
			}
			var stored bson.M
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&stored); err != nil {
				t.Fatal(err)
			}
			if tc.wantWon && (stored["visits"] != int32(2) || stored["version"] != int32(2)) {
				t.Errorf("stored %v: want the writer's visits 2 kept and version 2", stored)
			}
		})
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	fs := fstest.MapFS{}
	for name, data := range files {
		fs[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fs
}
