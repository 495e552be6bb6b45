package backfill_test

import (
	"context"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillWorkersTotalAfterInterrupt: a --workers run stopped (the
// context cancelled, as Ctrl-C does) after its k-th batch reports as total
// every document at the target: those of finished ranges, of the
// unfinished ones, and of the runs before it; the runs after the first say
// they resumed.
func TestBackfillWorkersTotalAfterInterrupt(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	const docs = 200
	insertItems(t, db, docs)
	r := counterRunner(t, db)
	opts := backfill.WithRangesPerWorker(backfill.Options{Batch: 10, Workers: 2}, 4)
	atTarget := func() int64 {
		n, err := db.Collection("items").CountDocuments(ctx, bson.D{{Key: "version", Value: int32(1)}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var upgraded int64
	for run, stopAfter := range []int64{3, 5, 0} {
		cctx, cancel := context.WithCancel(ctx)
		var batches atomic.Int64
		backfill.SetHook(r, func(point string, _ int64, _ int) {
			if point == "backfill.batch" && batches.Add(1) == stopAfter {
				cancel()
			}
		})
		res, err := backfill.Run(cctx, r, opts)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c := res.Collections[0]
		upgraded += c.Upgraded
		if want := map[bool]backfill.Stopped{true: "", false: backfill.StoppedInterrupted}[stopAfter == 0]; res.Stopped != want {
			t.Fatalf("run %d: stopped %q, want %q (%+v)", run, res.Stopped, want, c)
		}
		if c.Resumed != (run > 0) {
			t.Errorf("run %d: resumed %v, want %v: a run after a stopped one resumes its ranges", run, c.Resumed, run > 0)
		}
		if n := atTarget(); c.TotalUpgraded != n || upgraded != n {
			t.Errorf("run %d (stopped after batch %d): totalUpgraded %d, upgraded %d in all runs; %d documents are at the target", run, stopAfter, c.TotalUpgraded, upgraded, n)
		}
	}
	checkItems(t, db, docs)
}
