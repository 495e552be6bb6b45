package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestRangeLeasesNameTheirTarget: the range leases of
// two releases' backfills (targets 2 and 3) used to share their names
// ("backfill:items:range:0"), so each blocked the other's ranges; a down
// reverting items still takes the ranges of every stored plan, of every
// target, and waits for (here: refuses, with a short wait) a worker of
// the newest plan's last range.
func TestRangeLeasesNameTheirTarget(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	r := newRunner(t, db, interleaveFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	old, err := r.Acquire(ctx, lease.BackfillRange("items", 2, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Release(ctx)
	cur, err := newRunner(t, db, interleaveFS).Acquire(ctx, lease.BackfillRange("items", 3, 0), 0)
	if err != nil {
		t.Fatalf("range 0 of the plan to version 3 while range 0 of the plan to 2 is held: %v", err)
	}
	defer cur.Release(ctx)
	store := state.New(db)
	if _, _, err := store.StorePlan(ctx, "items", 2, bson.A{int32(10)}, "test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.StorePlan(ctx, "items", 3, bson.A{int32(5), int32(10), int32(15)}, "test"); err != nil {
		t.Fatal(err)
	}
	last, err := r.Acquire(ctx, lease.BackfillRange("items", 3, 3), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer last.Release(ctx)
	_, err = newRunner(t, db, interleaveFS, runner.WithLockWait(100*time.Millisecond)).DownTo(ctx, 1)
	var be *runner.BackfillRunningError
	if !errors.As(err, &be) || be.Lease.Name != lease.BackfillRange("items", 2, 0) {
		t.Fatalf("down while ranges of both plans are held: %v; want it refused on the first held range", err)
	}
	old.Release(ctx)
	cur.Release(ctx)
	_, err = newRunner(t, db, interleaveFS, runner.WithLockWait(100*time.Millisecond)).DownTo(ctx, 1)
	if !errors.As(err, &be) || be.Lease.Name != lease.BackfillRange("items", 3, 3) {
		t.Fatalf("down while range 3 of the plan to version 3 is held: %v; want it refused on that lease", err)
	}
}
