package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

func TestLockHeldTimesOutNamingHolder(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	future := time.Now().Add(time.Hour)
	if _, err := db.Collection(runner.DefaultLockCollection).InsertOne(ctx, bson.D{
		{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "deploy-7"}, {Key: "host", Value: "ci-runner"}, {Key: "pid", Value: 42},
		{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: future},
	}); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, samples(t), runner.WithLockWait(300*time.Millisecond))
	_, err := r.Up(ctx)
	var lt *runner.LockTimeoutError
	if !errors.As(err, &lt) || !errors.Is(err, runner.ErrLockTimeout) || !strings.Contains(err.Error(), "held by deploy-7 (host ci-runner, pid 42)") || !strings.Contains(err.Error(), "a forced removal of the lease frees it") {
		t.Fatalf("got %v", err)
	}
	if v := ledgerVersions(t, db); len(v) != 0 {
		t.Fatal("applied without the lock")
	}
	// unlock without force refuses a live lock; with force removes it.
	if _, err := r.Unlock(ctx, false); err == nil || !strings.Contains(err.Error(), "its lease has not expired") {
		t.Fatalf("unlock without force: %v", err)
	}
	if h, err := r.Unlock(ctx, true); err != nil || h == nil || h.Owner != "deploy-7" {
		t.Fatalf("unlock --force: %v %v", h, err)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStaleLockTakenOverOnlyAfterExpiry: a dead process's lock blocks until
// its lease expires by the server's clock, then is taken over.
func TestStaleLockTakenOverOnlyAfterExpiry(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	expires := time.Now().Add(1500 * time.Millisecond)
	if _, err := db.Collection(runner.DefaultLockCollection).InsertOne(ctx, bson.D{
		{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "dead"}, {Key: "host", Value: "h"}, {Key: "pid", Value: 1},
		{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: expires},
	}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	r := newRunner(t, db, samples(t), runner.WithLogger(events.LoggerFunc(func(e events.Entry) { kinds = append(kinds, e.Kind()) })))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Now().Before(expires) {
		t.Errorf("the lock was taken before its lease expired")
	}
	joined := ""
	for _, k := range kinds {
		joined += string(k) + " "
	}
	if !strings.Contains(joined, "lock.waiting lock.takenOver lock.acquired") {
		t.Errorf("events = %s", joined)
	}
}

// TestConcurrentUpGoroutines: several runners (own clients, own owners) at
// once; each migration is applied once and every run succeeds.
func TestConcurrentUpGoroutines(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	const runs = 6
	var wg sync.WaitGroup
	total := make([]int, runs)
	errs := make([]error, runs)
	for i := 0; i < runs; i++ {
		db := sandboxtest.Connect(t, srv.URI()).Database("app")
		r := newRunner(t, db, samples(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied, err := r.Up(ctx)
			total[i], errs[i] = len(applied.Applied), err
		}()
	}
	wg.Wait()
	sum := 0
	for i := range errs {
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
		}
		sum += total[i]
	}
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	if sum != 4 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
		t.Fatalf("migrations applied %d times in total (want 4), ledger %v", sum, ledgerVersions(t, db))
	}
}
