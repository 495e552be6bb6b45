package backfill_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// The per-field guard of a field that held an array matches that array
// exactly: a writer who, between the backfill's read and its write,
// wrapped the array in a new one (tags: [1, 2] became [[1, 2], 3], which
// {tags: [1, 2]} still matches: src/mongo/db/matcher/path.cpp,
// BSONElementIterator yields a leaf array's elements, then the array)
// makes the write match nothing, and the retry from a fresh read renames
// the writer's value. On the sandbox (FerretDB v1), which stores no nested
// arrays, the unchanged array must still be renamed (the exact form would
// match nothing there: see version.Arrays).
func TestBackfillArrayGuardIsExact(t *testing.T) {
	backfillArrayGuard(t, sandboxtest.Database(t, "app"))
}

func TestBackfillArrayGuardIsExactMongoDB(t *testing.T) {
	backfillArrayGuard(t, sandboxtest.MongoDB(t, "mongomig_test_backfill_arrays", "TestBackfillArrayGuardIsExact covers the sandbox"))
}

func backfillArrayGuard(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	users := db.Collection("users")
	for i, tags := range []bson.A{{1, 2}, {}} {
		if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "tags", Value: tags}}); err != nil {
			t.Fatal(err)
		}
	}
	writers := map[int32]bson.A{0: {bson.A{1, 2}, 3}, 1: {bson.A{}}}
	fs := fstest.MapFS{"0001_labels.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {tags: labels}\n")}}
	r := newRunner(t, db, fs)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	nested := true
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point != "backfill.read" {
			return
		}
		backfill.SetHook(r, nil)
		for id, tags := range writers {
			_, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tags", Value: tags}}}})
			if err != nil && strings.Contains(err.Error(), "nested arrays are not supported") {
				nested = false
				continue
			}
			if err != nil {
				t.Error(err)
			}
		}
	})
	// The client path: the server-side one computes each upgrade from the
	// value the server holds when it applies it, guarding nothing.
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 20, ClientSide: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 2 || c.Conflicts != 0 {
		t.Errorf("result = %+v", c)
	}
	want := map[int32]bson.A{0: {1, 2}, 1: {}}
	if nested {
		want = writers
	} else {
		t.Log("FerretDB v1 stores no nested arrays: no writer could nest one, the unchanged arrays are checked")
	}
	for id, tags := range want {
		var got bson.D
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		w, _ := bson.MarshalExtJSON(bson.D{{Key: "_id", Value: id}, {Key: "labels", Value: tags}, {Key: "version", Value: int32(1)}}, true, false)
		g, _ := bson.MarshalExtJSON(got, true, false)
		if string(w) != string(g) {
			t.Errorf("stored %s, want %s", g, w)
		}
	}
}
