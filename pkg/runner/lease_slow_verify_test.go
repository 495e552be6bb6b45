package runner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillSurvivesASlowLeaseCheck: the lease is held throughout, but
// one read of the lease document by the fence is slow (300 ms, as on a
// loaded machine, with the tests' 1 s lease: more than the fence's margin
// of a fifth of the lease). The backfill finishes: the lease is neither
// expired nor taken over. lease.Held.Fence used to take its own read's
// timeout for a loss ("migration lock lost: ... cannot verify the lease
// backfill:items: context deadline exceeded") while its clock said the
// lease held; a read with no answer now leaves the clock as the guarantee,
// as a network error did. The likely cause of
// TestBackfillWorkersAfterRangesDoneSaySweep failing once at load 6.
func TestBackfillSurvivesASlowLeaseCheck(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	var slowed atomic.Int32
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "find" && e.Command.Lookup("find").StringValue() == runner.DefaultLockCollection && slowed.Add(1) == 3 {
			time.Sleep(300 * time.Millisecond)
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(monitor)).Database("app")
	insertItems(t, db, 60)
	r := counterRunner(t, db)
	slowed.Store(0)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatalf("backfill under a live lease whose check was slow: %v", err)
	}
	if c := res.Collections[0]; !c.Proven {
		t.Errorf("%+v", c)
	}
	checkItems(t, db, 60)
}
