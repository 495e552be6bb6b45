package runner_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillSurvivesASlowLeaseCheck: the lease is held throughout, but
// one read of the lease document by the fence is slow (300 ms, as on a
// loaded machine, with the tests' 1 s lease: more than the fence's margin
// of a fifth of the lease). The backfill should finish: the lease is
// neither expired nor taken over. It fails with "migration lock lost: our
// lease expired and another process took it over (cannot verify the lease
// backfill:items: context deadline exceeded)": lease.Held.Fence reads the
// lease document with a timeout of the margin and takes a timeout for a
// loss, while its own clock says the lease holds (a network error there is
// taken as "still held"). A bug of pkg/lease, which this review may not
// edit: the test runs with MONGOMIG_LEASE_BUGS=1 until it is fixed there.
// The likely cause of TestBackfillWorkersAfterRangesDoneSaySweep failing
// once at load 6 with the tests' 1 s lease.
func TestBackfillSurvivesASlowLeaseCheck(t *testing.T) {
	if os.Getenv("MONGOMIG_LEASE_BUGS") == "" {
		t.Skip("a known pkg/lease bug (a slow check of a live lease reads as its loss): set MONGOMIG_LEASE_BUGS=1 to run")
	}
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
	res, err := r.Backfill(ctx, runner.BackfillOptions{Batch: 10})
	if err != nil {
		t.Fatalf("backfill under a live lease whose check was slow: %v", err)
	}
	if c := res.Collections[0]; !c.Proven {
		t.Errorf("%+v", c)
	}
	checkItems(t, db, 60)
}
