package downgrade_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// A down's guarded write of a document whose field held an array matches
// that array exactly: a writer who wrapped it in a new array before the
// bulk write (labels: [1, 2] became [[1, 2], 3], which {labels: [1, 2]}
// still matches: src/mongo/db/matcher/path.cpp, BSONElementIterator
// yields a leaf array's elements, then the array) makes it match nothing,
// and the next pass downgrades the writer's value. On the sandbox
// (FerretDB v1, no nested arrays) the unchanged array must be downgraded
// in one pass.
func TestDowngradeArrayGuardIsExact(t *testing.T) {
	downgradeArrayGuard(t, sandboxtest.Database(t, "app"))
}

func TestDowngradeArrayGuardIsExactMongoDB(t *testing.T) {
	downgradeArrayGuard(t, sandboxtest.MongoDB(t, "mongomig_test_downgrade_arrays", "TestDowngradeArrayGuardIsExact covers the sandbox"))
}

func downgradeArrayGuard(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	fs := fstest.MapFS{"0001_labels.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {tags: labels}\n    downgrade:\n      - rename: {labels: tags}\n")}}
	reg, err := version.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	// Document 2 is left alone, so the first pass downgrades something.
	for id, labels := range map[int32]bson.A{1: {1, 2}, 2: {"x"}} {
		if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "labels", Value: labels}, {Key: "version", Value: int32(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	writer := bson.A{bson.A{1, 2}, 3}
	nested, wrote := true, false
	w := downgrade.Walk{Coll: users, Name: "users", Version: 1, Registry: reg, BeforeWrite: func(int) {
		if wrote {
			return
		}
		wrote = true
		_, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "labels", Value: writer}}}})
		if err != nil && strings.Contains(err.Error(), "nested arrays are not supported") {
			nested = false
			return
		}
		if err != nil {
			t.Error(err)
		}
	}}
	done, reread, err := w.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := bson.D{{Key: "_id", Value: int32(1)}, {Key: "tags", Value: writer}}
	if !nested {
		t.Log("FerretDB v1 stores no nested arrays: no writer could nest one, the unchanged array is checked")
		want = bson.D{{Key: "_id", Value: int32(1)}, {Key: "tags", Value: bson.A{1, 2}}}
		if done != 2 || reread != 0 {
			t.Errorf("done %d, reread %d; want 2, 0", done, reread)
		}
	} else if done != 2 || reread != 1 {
		t.Errorf("done %d, reread %d; want 2 downgraded, 1 after a reread", done, reread)
	}
	var got bson.D
	if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	g, _ := bson.MarshalExtJSON(got, true, false)
	x, _ := bson.MarshalExtJSON(want, true, false)
	if string(g) != string(x) {
		t.Errorf("stored %s, want %s", g, x)
	}
}
