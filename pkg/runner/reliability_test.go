package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// Fault and load trials. Their counts are the figures docs/reliability.md
// reports; MONGOMIG_TRIALS raises them for a long run (make reliability).
func trials(def int) int {
	if v, err := strconv.Atoi(os.Getenv("MONGOMIG_TRIALS")); err == nil && v > def {
		return v
	}
	return def
}

func helperCmd(uri, mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MONGOMIG_HELPER_URI="+uri, "MONGOMIG_HELPER_MODE="+mode)
	return cmd
}

// killAfter starts cmd and SIGKILLs it after d; it reports whether the
// process was still running (killed) rather than finished.
func killAfter(t *testing.T, cmd *exec.Cmd, d time.Duration) bool {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}

// TestFaultKilledUp kills `up` at random points, each time on a fresh
// database, then runs it again: every migration ends recorded exactly once
// and the collections have exactly the declared indexes.
func TestFaultKilledUp(t *testing.T) {
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	rng := rand.New(rand.NewPCG(1, 2))
	n, mid := trials(20), 0
	for trial := 0; trial < n; trial++ {
		db := client.Database("app")
		_ = db.Drop(context.Background())
		if killAfter(t, helperCmd(srv.URI(), "up"), time.Duration(rng.IntN(60))*time.Millisecond) {
			if v := ledgerVersions(t, db); len(v) < 4 {
				mid++
			}
		}
		out, err := helperCmd(srv.URI(), "up").CombinedOutput()
		if err != nil {
			t.Fatalf("trial %d: next run: %v\n%s", trial, err, out)
		}
		if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
			t.Fatalf("trial %d: ledger %v", trial, v)
		}
		if idx := indexNames(t, db.Collection("users")); idx["email_1"] || !idx["contact.email_1"] {
			t.Fatalf("trial %d: users indexes %v", trial, idx)
		}
	}
	t.Logf("up: %d trials, %d killed mid-run, 0 failures", n, mid)
}

// TestFaultKilledDown kills `down --to 2` at random points; the next run
// finishes, and every version-3 user is downgraded exactly once.
func TestFaultKilledDown(t *testing.T) {
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	db := client.Database("app")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	n, mid := trials(20), 0
	const users = 60
	for trial := 0; trial < n; trial++ {
		if out, err := helperCmd(srv.URI(), "up").CombinedOutput(); err != nil {
			t.Fatalf("up: %v\n%s", err, out)
		}
		_, _ = db.Collection("users").DeleteMany(ctx, bson.D{})
		docs := make([]any, users)
		for i := range docs {
			docs[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprint("u", i)},
				{Key: "contact", Value: bson.D{{Key: "email", Value: fmt.Sprintf("u%d@x", i)}}}, {Key: "status", Value: "active"}, {Key: "version", Value: 3}}
		}
		if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if killAfter(t, helperCmd(srv.URI(), "down"), time.Duration(rng.IntN(80))*time.Millisecond) {
			if v := ledgerVersions(t, db); len(v) > 2 {
				mid++
			}
		}
		out, err := helperCmd(srv.URI(), "down").CombinedOutput()
		if err != nil && !strings.Contains(string(out), "nothing to revert") {
			t.Fatalf("trial %d: next run: %v\n%s", trial, err, out)
		}
		if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
			t.Fatalf("trial %d: ledger %v", trial, v)
		}
		cur, err := db.Collection("users").Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var got []bson.M
		if err := cur.All(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != users {
			t.Fatalf("trial %d: %d users, want %d", trial, len(got), users)
		}
		for _, u := range got {
			if _, ok := u["version"]; ok || u["contact"] != nil || u["status"] != nil || !strings.HasSuffix(fmt.Sprint(u["email"]), "@x") {
				t.Fatalf("trial %d: user not downgraded exactly once: %v", trial, u)
			}
		}
	}
	t.Logf("down: %d trials, %d killed mid-run, 0 failures", n, mid)
}

// TestLoadConcurrentUpProcesses starts 8 `up` processes at once, 20 times,
// each time on a fresh database: exactly once every time.
func TestLoadConcurrentUpProcesses(t *testing.T) {
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	const procs = 8
	rounds := trials(20)
	for round := 0; round < rounds; round++ {
		db := client.Database("app")
		_ = db.Drop(context.Background())
		var wg sync.WaitGroup
		outs := make([]string, procs)
		errs := make([]error, procs)
		for i := 0; i < procs; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := helperCmd(srv.URI(), "up").CombinedOutput()
				outs[i], errs[i] = strings.TrimSpace(string(out)), err
			}()
		}
		wg.Wait()
		sum := 0
		for i := range outs {
			if errs[i] != nil {
				t.Fatalf("round %d process %d: %v %s", round, i, errs[i], outs[i])
			}
			var k int
			fmt.Sscan(outs[i], &k)
			sum += k
		}
		if sum != 4 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
			t.Fatalf("round %d: applied %d times in total, ledger %v", round, sum, ledgerVersions(t, db))
		}
	}
	t.Logf("load: %d rounds of %d concurrent up processes, exactly once every time", rounds, procs)
}

// TestFaultServerRestartedUnderUp kills the server (a sandbox in a process
// of its own) while an `up` process runs, and restarts it on the same
// address and data: the interrupted run fails with a clear error, and the
// next run finishes, each migration recorded once.
func TestFaultServerRestartedUnderUp(t *testing.T) {
	dir := t.TempDir()
	server, uri := serveProcess(t, dir, "")
	addr := strings.TrimSuffix(strings.TrimPrefix(uri, "mongodb://"), "/")
	cmd := helperCmd(uri, "up-slow")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	_ = server.Process.Signal(syscall.SIGKILL)
	_ = server.Wait()
	werr := cmd.Wait()
	if werr == nil {
		t.Fatalf("the run survived its server's death: %s", out.String())
	}
	if !strings.Contains(out.String(), "connection") && !strings.Contains(out.String(), "server selection") {
		t.Errorf("unclear error from the interrupted run: %s", out.String())
	}
	server2, uri2 := serveProcess(t, dir, addr)
	defer func() { _ = server2.Process.Signal(syscall.SIGKILL); _ = server2.Wait() }()
	next, err := helperCmd(uri2, "up").CombinedOutput()
	if err != nil {
		t.Fatalf("next run: %v\n%s", err, next)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri2))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	if v := ledgerVersions(t, client.Database("app")); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("ledger after restart = %v", v)
	}
	t.Logf("interrupted run said: %s", strings.TrimSpace(out.String()))
}

// TestFaultLedgerEditedByHand: a deleted ledger entry is re-applied (its
// commands are idempotent) and recorded once; an entry made unreadable is
// a clear error naming the ledger.
func TestFaultLedgerEditedByHand(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	ledger := db.Collection(runner.DefaultLedgerCollection)
	if _, err := ledger.DeleteOne(ctx, bson.D{{Key: "_id", Value: int64(4)}}); err != nil {
		t.Fatal(err)
	}
	applied, err := r.Up(ctx)
	if err != nil || len(applied.Applied) != 1 || applied.Applied[0].Version != 4 {
		t.Fatalf("after deleting entry 4: %+v %v", applied, err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("ledger = %v", v)
	}
	if _, err := ledger.UpdateOne(ctx, bson.D{{Key: "_id", Value: int64(2)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "appliedAt", Value: "yesterday"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Up(ctx)
	if err == nil || !strings.Contains(err.Error(), "read ledger mongomig_migrations") || !strings.Contains(err.Error(), "edited by hand") {
		t.Fatalf("unreadable ledger: %v", err)
	}
}

func helperDown(db *mongo.Database) int {
	r, err := runner.New(db, os.DirFS("../../migrations"), runner.WithLockLease(time.Second), runner.WithLockWait(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := r.DownTo(context.Background(), 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var serveProcess = fixtures.ServeProcess
