package backfill_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
)

// TestBackfillServerSideBounded: the server-side path upgrades _id ranges
// of at most Batch documents, one updateMany per unit of the plan for each
// range, and reports progress after each range.
func TestBackfillServerSideBounded(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	before := len(rec.Named("update"))
	var progress []int64
	res, err := backfill.Run(ctx, r, backfill.WithProgress(backfill.Options{Collections: []string{"users"}, Batch: 15, ServerSide: true, AssumeNoWriters: true},
		func(p events.BackfillBatch) { progress = append(progress, p.Upgraded) }))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.ServerSide != 40 || c.Batches != 0 || !c.Proven {
		t.Fatalf("result %+v", c)
	}
	ranges := map[string]bool{}
	for _, cmd := range rec.Named("update")[before:] {
		if cmd.Lookup("update").StringValue() != "users" {
			continue
		}
		for _, u := range mustArray(t, cmd.Lookup("updates")) {
			q := u.Document().Lookup("q").String()
			i := strings.Index(q, `{"_id": {"$gte"`)
			if i < 0 || !u.Document().Lookup("multi").Boolean() {
				t.Fatalf("server-side update without an _id range: %s", u)
			}
			ranges[q[i:i+120]] = true
		}
	}
	if len(ranges) < 3 {
		t.Errorf("40 users upgraded in %d _id ranges; want at least 3 of at most 15", len(ranges))
	}
	if len(progress) < 3 || progress[len(progress)-1] != 40 {
		t.Errorf("progress after each range: %v", progress)
	}
	var n int64
	if n, err = db.Collection("users").CountDocuments(ctx, bson.D{{Key: "version", Value: 3}}); err != nil || n != 40 {
		t.Errorf("%d users at version 3 (%v)", n, err)
	}
}

// TestBackfillServerSideRateAndMaxTime: --rate throttles the server-side
// path range by range, and --max-time stops it between two ranges.
func TestBackfillServerSideRateAndMaxTime(t *testing.T) {
	ctx := context.Background()
	_, _, r := sampleApplied(t)
	res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: 10, ServerSide: true, AssumeNoWriters: true, Rate: 20, MaxTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; res.Stopped != "deadline" || c.ServerSide == 0 || c.ServerSide >= 40 || c.Batches != 0 {
		t.Fatalf("stopped %q, %+v: want a deadline stop part-way, on the server side", res.Stopped, c)
	}
	res, err = backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: 10, ServerSide: true, AssumeNoWriters: true})
	if err != nil || !res.Collections[0].Proven {
		t.Fatalf("second run: %+v %v", res, err)
	}
}

// TestBackfillServerSideRetriesTransientErrors stops the server in the
// middle of a server-side backfill and starts it again on the same address
// 300 ms later: the updates that met the lost connection are retried with
// backoff, and the backfill finishes on the server side (it does not fall
// back to the client path).
func TestBackfillServerSideRetriesTransientErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URI())
	var mu sync.Mutex
	current := srv
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		_ = current.Stop(context.Background())
	})
	var failed atomic.Int64
	monitor := &event.CommandMonitor{Failed: func(_ context.Context, e *event.CommandFailedEvent) {
		// The update, or the fence's read of the lock just before it.
		if e.CommandName == "update" || e.CommandName == "find" {
			failed.Add(1)
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetRetryWrites(false).SetMonitor(monitor)).Database("app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, samples(t))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan error, 1)
	backfill.SetHook(r, func(point string, _ int64, k int) {
		if point != "backfill.unit" || k != 1 {
			return
		}
		backfill.SetHook(r, nil)
		mu.Lock()
		_ = current.Stop(ctx)
		mu.Unlock()
		go func() {
			time.Sleep(300 * time.Millisecond)
			s, err := sandbox.Start(sandbox.Options{Dir: dir, Addr: u.Host})
			if err == nil {
				mu.Lock()
				current = s
				mu.Unlock()
			}
			restarted <- err
		}()
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: 15, ServerSide: true, AssumeNoWriters: true})
	if rerr := <-restarted; rerr != nil {
		t.Fatalf("restart the server: %v", rerr)
	}
	if err != nil {
		t.Fatalf("backfill across a server restart: %v", err)
	}
	// Users 7 and 23 fail 0003's schema once upgraded: left to the client
	// path, which lists them, as on every path.
	if c := res.Collections[0]; c.ServerSide != 38 || c.Batches != 1 || len(c.Failed) != 1 || c.Failed[0].Count != 2 || c.ServerSideNote != "" {
		t.Fatalf("result %+v: want the 38 valid upgrades on the server side after retries, 2 listed", c)
	}
	if failed.Load() == 0 {
		t.Fatal("no command failed: the restart did not land under the backfill")
	}
}
