package backfill_test

import (
	"context"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillWholeGuardMongoDB: where a func step reads the whole
// document, the client path guards it as read in one clause
// (version.WholeFilter), and a writer landing between the read and the
// write is never overwritten, in the forms a query's equality gets wrong
// (src/mongo/db/matcher/path.cpp: a leaf array yields its elements, so
// {n: 0} matches n: [0]):
//   - scalar to array: n: 0 becomes [0], an array holding the value read.
//     The guard must not match: the document is re-read, its upgrade fails
//     (incN wants a number) and it keeps the writer's [0];
//   - another field: a note added, which no per-field guard of the
//     steps' fields would see; the func may have read it, so the write
//     waits for a fresh read and the document is upgraded from it.
func TestBackfillWholeGuardMongoDB(t *testing.T) {
	uriDB := sandboxtest.MongoDB(t, "mongomig_test_wholeguard", "FerretDB v1 has no $expr and no atomic guarded writes: TestBackfillConcurrentWriterNeverOverwritten interleaves there")
	for _, tc := range []struct {
		name   string
		write  bson.D
		failed int
	}{
		{"scalarToArray", bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: bson.A{int32(0)}}}}}, 1},
		{"otherField", bson.D{{Key: "$set", Value: bson.D{{Key: "note", Value: "app"}}}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := &cmdlog.Recorder{}
			db := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database(uriDB.Name() + "_" + tc.name)
			if err := db.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Drop(context.Background()) })
			insertItems(t, db, 10)
			items := db.Collection("items")
			var first bson.D
			if err := items.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}})).Decode(&first); err != nil {
				t.Fatal(err)
			}
			r := counterRunner(t, db)
			backfill.SetHook(r, func(point string, _ int64, _ int) {
				if point == "backfill.read" {
					if _, err := items.UpdateOne(ctx, bson.D{{Key: "_id", Value: first[0].Value}}, tc.write); err != nil {
						t.Error(err)
					}
					backfill.SetHook(r, nil)
				}
			})
			res, err := backfill.Run(ctx, r, backfill.Options{ClientSide: true, Batch: 20})
			if err != nil {
				t.Fatal(err)
			}
			if c := res.Collections[0]; c.Upgraded != int64(10-tc.failed) || len(c.Failed) != tc.failed || c.Conflicts != 0 {
				t.Errorf("result = %+v; want %d upgraded, %d failed", c, 10-tc.failed, tc.failed)
			}
			whole := 0
			for _, cmd := range onColl(rec, "update", "items") {
				for _, u := range mustArray(t, cmd.Lookup("updates")) {
					if _, ok := u.Document().Lookup("q", "$expr").DocumentOK(); ok {
						whole++
					}
				}
			}
			if whole < 10 {
				t.Errorf("%d statements guarded by the whole document; want every one", whole)
			}
			var got bson.M
			if err := items.FindOne(ctx, bson.D{{Key: "_id", Value: first[0].Value}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			switch tc.name {
			case "scalarToArray":
				if n, ok := got["n"].(bson.A); !ok || len(n) != 1 || n[0] != int32(0) || got["version"] != nil {
					t.Errorf("document = %v; want the writer's n: [0] kept, not upgraded", got)
				}
			case "otherField":
				if got["note"] != "app" || got["n"] != int32(1) || got["version"] != int32(1) {
					t.Errorf("document = %v; want the note kept and n upgraded once", got)
				}
			}
		})
	}
}
