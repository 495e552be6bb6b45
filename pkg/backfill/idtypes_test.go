package backfill_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillResumesPastAnotherIDType: a collection whose _ids are of
// several BSON types (ints, strings for legacy documents, ObjectIds for
// newer ones, dates) is stopped after its first 30 documents in _id order
// (the ints, the strings, 10 ObjectIds) and resumed: the resumed run walks
// every document after the checkpoint in _id order, whatever its type, and
// proves the target. {_id: {$gt: <ObjectId>}} matches ObjectIds only
// (MongoDB compares values of one type class): the resumed run used to
// skip the dates and report the walk complete, upgrading nothing.
func TestBackfillResumesPastAnotherIDType(t *testing.T) {
	resumePastIDTypes(t, sandboxtest.Database(t, "app"), nil)
}

// TestBackfillResumesPastAnotherIDTypeMongoDB: the same on MongoDB, with
// _ids of the types FerretDB does not store (decimal, MaxKey) after the
// checkpoint.
func TestBackfillResumesPastAnotherIDTypeMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_idtypes", "no real MongoDB to store decimal and MaxKey _ids on (the sandbox runs TestBackfillResumesPastAnotherIDType)")
	d128, _ := bson.ParseDecimal128("1000.5")
	resumePastIDTypes(t, db, []any{bson.MaxKey{}, d128})
}

func resumePastIDTypes(t *testing.T, db *mongo.Database, more []any) {
	ctx := context.Background()
	var docs []any
	for i := range 10 {
		docs = append(docs,
			bson.D{{Key: "_id", Value: fmt.Sprintf("legacy-%02d", i)}, {Key: "i", Value: int32(i)}, {Key: "n", Value: int32(0)}},
			bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "i", Value: int32(10 + i)}, {Key: "n", Value: int32(0)}},
			bson.D{{Key: "_id", Value: bson.DateTime(1_700_000_000_000 + int64(i)*1000)}, {Key: "i", Value: int32(20 + i)}, {Key: "n", Value: int32(0)}},
			bson.D{{Key: "_id", Value: int32(100 + i)}, {Key: "i", Value: int32(30 + i)}, {Key: "n", Value: int32(0)}})
	}
	for i, id := range more {
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "i", Value: int32(40 + i)}, {Key: "n", Value: int32(0)}})
	}
	if _, err := db.Collection("items").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 2 {
			cancel()
		}
	})
	res, err := backfill.Run(cctx, r, backfill.Options{Batch: 15})
	cancel()
	if err != nil || res.Stopped != "interrupted" {
		t.Fatalf("first run: %+v, %v; want it interrupted", res, err)
	}
	backfill.SetHook(r, nil)
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 15})
	if err != nil {
		t.Fatal(err)
	}
	all := int64(len(docs))
	if c := res.Collections[0]; c.Upgraded != all-30 || c.TotalUpgraded != all || !c.Proven {
		t.Errorf("resumed run: upgraded %d, total %d, complete %v, proven %v; want %d, %d, proven", c.Upgraded, c.TotalUpgraded, c.Complete, c.Proven, all-30, all)
	}
	checkItems(t, db, len(docs))
}
