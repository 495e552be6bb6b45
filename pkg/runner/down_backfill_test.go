package runner_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
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
	for round, opts := range []backfill.Options{{Batch: 4}, {Batch: 4}, {Batch: 2, Workers: 2}, {Batch: 4}} {
		res, err := backfill.Run(ctx, r, opts)
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

// TestDownDowngradesADocumentWrittenDuringItsPass: the release being rolled
// back still runs during down and inserts a version-2 user while down's
// pass writes its batch, after its cursor went past. down goes on until a
// pass finds no document at version 2: the late user is downgraded too.
// down used to stop after a pass whose writes all matched, leaving it at
// version 2, a version the ledger no longer has, for the old release to
// fail on.
func TestDownDowngradesADocumentWrittenDuringItsPass(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, copyBackFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	user := func() bson.D {
		return bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "email", Value: "a@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}}
	}
	for range 3 {
		if _, err := users.InsertOne(ctx, user()); err != nil {
			t.Fatal(err)
		}
	}
	inserted := false
	runner.SetHook(r, func(point string, _ int64, _ int) {
		if point == "down.write" && !inserted {
			inserted = true
			if _, err := users.InsertOne(ctx, user()); err != nil {
				t.Error(err)
			}
		}
	})
	reverted, err := r.DownTo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	n, err := users.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(2)}})
	if err != nil || n != 0 {
		t.Errorf("%d users left at version 2 after down (%v)", n, err)
	}
	if len(reverted) != 1 || len(reverted[0].Documents) != 1 || reverted[0].Documents[0].Count != 4 {
		t.Errorf("reverted %+v; want 4 users downgraded", reverted)
	}
}
