package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillWorkerPanicIsReturned: a panic in one of `backfill
// --workers`'s goroutines (here from the test hook after a batch, standing
// for a bug of ours) no longer ends the process before the leases are
// released: Backfill returns a *runner.PanicError naming the worker, and a
// second run finishes the collection, every item upgraded exactly once.
func TestBackfillWorkerPanicIsReturned(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 40)
	r := counterRunner(t, db)
	var batches atomic.Int32
	runner.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.batch" && batches.Add(1) == 2 {
			panic("a bug in a worker")
		}
	})
	_, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	var pe *runner.PanicError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Where, "backfill worker ") || pe.Value != "a bug in a worker" || len(pe.Stack) == 0 {
		t.Fatalf("err %v (%T), want a *runner.PanicError from a backfill worker", err, err)
	}
	runner.SetHook(r, nil)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	if err != nil || !res.Collections[0].Proven {
		t.Fatalf("second run: %+v %v", res, err)
	}
	checkItems(t, db, 40)
}
