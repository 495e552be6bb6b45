package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// expiryDB is a database of the second server holding 45 sessions, 30 of
// them past lifecycleFS's TTL, on a server with TTL indexes and views.
func expiryDB(t *testing.T, name string) *mongo.Database {
	db := sandboxtest.MongoDB(t, name, "no second server: the sandbox has no TTL indexes (lifecycle.txtar shows its refusal)")
	caps, err := probe.Lifecycle(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{probe.FeatureTTL, probe.FeatureViews} {
		if c := caps.Feature(f); !c.Available {
			t.Skipf("the server lacks %s: %s", f, c.Reason)
		}
	}
	insertSessions(t, db, 0, 30, 2*time.Hour)
	insertSessions(t, db, 100, 5, 45*time.Minute)
	insertSessions(t, db, 200, 10, 10*time.Minute)
	return db
}

// helperExpire is TestMain's "expire" mode: up to 0001 of lifecycleFS in
// batches of 7, killed by SIGKILL after the second batch's progress was
// saved.
func helperExpire(uri string) int {
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return 1
	}
	r, err := runner.New(client.Database(helperDB()), lifecycleFS(false), runner.WithExpiryBatch(7), runner.WithExpiryPause(0), runner.WithLockLease(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runner.SetHook(r, func(point string, version int64, i int) {
		if point == "expire.batch" && i == 2 {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	if _, err := r.UpTo(context.Background(), 1); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 1 // not killed: the test fails on the exit status
}

// TestExpiryKilledAndResumedOnMongoDB kills an up process in the middle
// of an expired backlog's deletion (after 2 of its batches of 7). The
// progress it saved says so; the next dry run counts what is left under
// the same cutoff; the next up takes the lock over, deletes the rest and
// counts the whole backlog once, then builds the index.
func TestExpiryKilledAndResumedOnMongoDB(t *testing.T) {
	db := expiryDB(t, "mongomig_test_expiry_kill")
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MONGOMIG_HELPER_URI="+os.Getenv("MONGOMIG_TEST_URI"), "MONGOMIG_HELPER_MODE=expire", "MONGOMIG_HELPER_DB="+db.Name())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed: %v: %s", err, out)
	}
	p, err := state.New(db).ExpiryProgressOf(ctx, 1, "sessions", "lastSeen_1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Deleted != 14 || p.Batches != 2 || p.Done || !p.Started() {
		t.Fatalf("progress after the kill = %+v, want 14 deleted in 2 batches, not done", p)
	}
	countIs(t, db, "sessions", 31)

	r := newRunner(t, db, lifecycleFS(false), runner.WithExpiryBatch(7), runner.WithExpiryPause(0), runner.WithLockWait(time.Minute))
	plan, err := r.Plan(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := planned(plan); got != "deleteExpired:lastSeen_1(16) createIndexes:lastSeen_1 create:" {
		t.Fatalf("dry run after the kill = %s, want the 16 left", got)
	}
	res, err := r.UpTo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Applied[0].Commands[0].Note; n != "deleted 30 documents in 5 batches before building lastSeen_1" {
		t.Errorf("resumed deletion: %q", n)
	}
	countIs(t, db, "sessions", 15)
}

// TestExpiryKeepsRefreshedSessionsOnMongoDB runs writers between a
// batch's read of expired _ids and its delete: an application that
// refreshes lastSeen ($set) and an old release that replaces the whole
// document (with a fresh lastSeen). Both writes are acknowledged before
// the delete; neither document is deleted, because the delete repeats the
// expiry filter.
func TestExpiryKeepsRefreshedSessionsOnMongoDB(t *testing.T) {
	db := expiryDB(t, "mongomig_test_expiry_writers")
	ctx := context.Background()
	r := newRunner(t, db, lifecycleFS(false), runner.WithExpiryBatch(7), runner.WithExpiryPause(0))
	sessions := db.Collection("sessions")
	var werr error
	runner.SetHook(r, func(point string, version int64, i int) {
		if point != "expire.read" || i != 0 {
			return
		}
		_, err1 := sessions.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "lastSeen", Value: time.Now()}}}})
		_, err2 := sessions.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "lastSeen", Value: time.Now()}, {Key: "active", Value: true}})
		werr = errors.Join(err1, err2)
	})
	res, err := r.UpTo(ctx, 1)
	if err != nil || werr != nil {
		t.Fatal(err, werr)
	}
	if n := res.Applied[0].Commands[0].Note; !strings.HasPrefix(n, "deleted 28 documents") {
		t.Errorf("deletion: %q, want 28 (30 expired, 2 refreshed meanwhile)", n)
	}
	for _, id := range []int{0, 1} {
		if n, _ := sessions.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); n != 1 {
			t.Errorf("session %d, refreshed between the read and the delete, was deleted", id)
		}
	}
}
