package runner_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillTotalAfterDownAndUp: a backfill to version 2, then down to 1
// (the users go back to version 0), then up and a backfill to version 2
// again: the second backfill's total counts the users it upgraded, not
// those of the first as well. down used to leave the checkpoint of the
// reverted target, so the new backfill to the same version number resumed
// its count: 20 upgraded for 10 users.
func TestBackfillTotalAfterDownAndUp(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, copyBackFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	const users = 10
	docs := make([]any, users)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "email", Value: "a@x"}}
	}
	if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for round, opts := range []runner.BackfillOptions{{Batch: 4}, {Batch: 4}, {Batch: 2, Workers: 2}, {Batch: 4}} {
		res, err := r.Backfill(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Collections[0]; c.Upgraded != users || c.TotalUpgraded != users || !c.Proven {
			t.Errorf("round %d (workers %d): upgraded %d, total %d, proven %v; want %d, %d, proven", round, opts.Workers, c.Upgraded, c.TotalUpgraded, c.Proven, users, users)
		}
		if _, err := r.DownTo(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Up(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
