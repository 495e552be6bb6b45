package backfill_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillWorkersStoppedListsRangeFailures: a --workers run stopped
// (Ctrl-C) before the sweep lists the documents its ranges could not
// upgrade, and so exits non-zero, as a single walk stopped the same way
// does. Every item here fails (n is a string), so the first batch written
// met failures. The ranges' failures used to be dropped: the run listed
// none, and `backfill --max-time` exited 0 with failures found.
func TestBackfillWorkersStoppedListsRangeFailures(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	const docs = 40
	items := make([]any, docs)
	for i := range items {
		items[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "n", Value: "x"}}
	}
	if _, err := db.Collection("items").InsertMany(ctx, items); err != nil {
		t.Fatal(err)
	}
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.batch" {
			once.Do(cancel)
		}
	})
	res, err := backfill.Run(cctx, r, backfill.WithRangesPerWorker(backfill.Options{Batch: 5, Workers: 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "interrupted" || !res.FailuresRemain() {
		t.Fatalf("stopped %q, failures listed %v; want interrupted, with the ranges' failures (%+v)", res.Stopped, res.FailuresRemain(), res.Collections)
	}
	g := res.Collections[0].Failed
	if len(g) != 1 || g[0].Count < 5 || g[0].Count > docs || len(g[0].ExampleIDs) == 0 {
		t.Errorf("failures %+v; want one group of at least the first batch's 5", g)
	}
	// The next run, not stopped, sweeps and lists each failing item once.
	res, err = backfill.Run(ctx, r, backfill.WithRangesPerWorker(backfill.Options{Batch: 5, Workers: 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Collections[0].Failed; len(g) != 1 || g[0].Count != docs {
		t.Errorf("complete run's failures %+v; want one group of %d", g, docs)
	}
}

// TestBackfillWorkersInterruptedWhileTakingARange: Ctrl-C lands while a
// worker is taking a range's lease (its insert is on its way). The run
// stops as interrupted, as it does anywhere else; the failed insert used to
// end Backfill with the error "range 0 of items: acquire lease ...: context
// canceled" (the CLI exited 130 all the same, the error wrapping
// context.Canceled, but the result said no "interrupted").
func TestBackfillWorkersInterruptedWhileTakingARange(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var inserts atomic.Int32
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "insert" || e.Command.Lookup("insert").StringValue() != runner.DefaultLockCollection {
			return
		}
		docs, _ := e.Command.Lookup("documents").Array().Values()
		if len(docs) == 1 && strings.HasPrefix(docs[0].Document().Lookup("_id").StringValue(), "backfill:items:v1:range:") && inserts.Add(1) == 2 {
			cancel()
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(monitor)).Database("app")
	insertItems(t, db, 40)
	r := counterRunner(t, db)
	res, err := backfill.Run(cctx, r, backfill.WithRangesPerWorker(backfill.Options{Batch: 5, Workers: 2}, 2))
	if err != nil || res.Stopped != "interrupted" {
		t.Fatalf("stopped %q, err %v; want interrupted, no error", res.Stopped, err)
	}
}
