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
	"sync/atomic"
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

// helperOn is helperCmd migrating database db.
func helperOn(uri, mode, db string) *exec.Cmd {
	cmd := helperCmd(uri, mode)
	cmd.Env = append(cmd.Env, "MONGOMIG_HELPER_DB="+db)
	return cmd
}

// sideBySide runs trials 0..n-1 on workers goroutines, worker w taking
// trials w, w+workers, ... in order on a database of its own (app_w): the
// trials of one database follow each other as they would alone, and the
// waits of different ones (a killed run's lease expiring, processes
// starting) overlap. It fails t with every error a trial returned. Two
// workers at most: with four (or two rounds of 8 processes), the helpers'
// 1 s leases expired on a loaded 2-core machine (i/o timeouts renewing).
func sideBySide(t *testing.T, n, workers int, trial func(db string, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := trial(fmt.Sprintf("app_%d", w), i); err != nil {
					errs[w] = fmt.Errorf("trial %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// delays draws n kill delays below max from rng, in trial order, before
// the trials run side by side (so a seed gives the same delays).
func delays(rng *rand.Rand, n, maxMS int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(rng.IntN(maxMS)) * time.Millisecond
	}
	return out
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
	t.Parallel() // a sandbox of its own
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	n := trials(20)
	wait := delays(rand.New(rand.NewPCG(1, 2)), n, 60)
	var mid atomic.Int64
	sideBySide(t, n, 2, func(name string, trial int) error {
		db := client.Database(name)
		_ = db.Drop(context.Background())
		if killAfter(t, helperOn(srv.URI(), "up", name), wait[trial]) {
			if v := ledgerVersions(t, db); len(v) < 4 {
				mid.Add(1)
			}
		}
		out, err := helperOn(srv.URI(), "up", name).CombinedOutput()
		if err != nil {
			return fmt.Errorf("next run: %v\n%s", err, out)
		}
		if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
			return fmt.Errorf("ledger %v", v)
		}
		if idx := indexNames(t, db.Collection("users")); idx["email_1"] || !idx["contact.email_1"] {
			return fmt.Errorf("users indexes %v", idx)
		}
		return nil
	})
	t.Logf("up: %d trials, %d killed mid-run, 0 failures", n, mid.Load())
}

// TestFaultKilledDown kills `down --to 2` at random points; the next run
// finishes, and every version-3 user is downgraded exactly once.
func TestFaultKilledDown(t *testing.T) {
	t.Parallel() // a sandbox of its own
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	ctx := context.Background()
	n := trials(20)
	wait := delays(rand.New(rand.NewPCG(3, 4)), n, 80)
	var mid atomic.Int64
	const users = 60
	sideBySide(t, n, 2, func(name string, trial int) error {
		db := client.Database(name)
		if out, err := helperOn(srv.URI(), "up", name).CombinedOutput(); err != nil {
			return fmt.Errorf("up: %v\n%s", err, out)
		}
		_, _ = db.Collection("users").DeleteMany(ctx, bson.D{})
		docs := make([]any, users)
		for i := range docs {
			docs[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprint("u", i)},
				{Key: "contact", Value: bson.D{{Key: "email", Value: fmt.Sprintf("u%d@x", i)}}}, {Key: "status", Value: "active"}, {Key: "version", Value: 3}}
		}
		if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
			return err
		}
		if killAfter(t, helperOn(srv.URI(), "down", name), wait[trial]) {
			if v := ledgerVersions(t, db); len(v) > 2 {
				mid.Add(1)
			}
		}
		out, err := helperOn(srv.URI(), "down", name).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "nothing to revert") {
			return fmt.Errorf("next run: %v\n%s", err, out)
		}
		if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
			return fmt.Errorf("ledger %v", v)
		}
		cur, err := db.Collection("users").Find(ctx, bson.D{})
		if err != nil {
			return err
		}
		var got []bson.M
		if err := cur.All(ctx, &got); err != nil {
			return err
		}
		if len(got) != users {
			return fmt.Errorf("%d users, want %d", len(got), users)
		}
		for _, u := range got {
			if _, ok := u["version"]; ok || u["contact"] != nil || u["status"] != nil || !strings.HasSuffix(fmt.Sprint(u["email"]), "@x") {
				return fmt.Errorf("user not downgraded exactly once: %v", u)
			}
		}
		return nil
	})
	t.Logf("down: %d trials, %d killed mid-run, 0 failures", n, mid.Load())
}

// TestLoadConcurrentUpProcesses starts 8 `up` processes at once, 20 times,
// each time on a fresh database: exactly once every time.
func TestLoadConcurrentUpProcesses(t *testing.T) {
	t.Parallel() // a sandbox of its own
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	const procs = 8
	rounds := trials(20)
	sideBySide(t, rounds, 1, func(name string, round int) error {
		db := client.Database(name)
		_ = db.Drop(context.Background())
		var wg sync.WaitGroup
		outs := make([]string, procs)
		errs := make([]error, procs)
		for i := 0; i < procs; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := helperOn(srv.URI(), "up", name).CombinedOutput()
				outs[i], errs[i] = strings.TrimSpace(string(out)), err
			}()
		}
		wg.Wait()
		sum := 0
		for i := range outs {
			if errs[i] != nil {
				return fmt.Errorf("process %d: %v %s", i, errs[i], outs[i])
			}
			var k int
			fmt.Sscan(outs[i], &k)
			sum += k
		}
		if sum != 4 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
			return fmt.Errorf("applied %d times in total, ledger %v", sum, ledgerVersions(t, db))
		}
		return nil
	})
	t.Logf("load: %d rounds of %d concurrent up processes, exactly once every time", rounds, procs)
}

// TestFaultServerRestartedUnderUp kills the server (a sandbox in a process
// of its own) while an `up` process runs, and restarts it on the same
// address and data: the interrupted run fails with a clear error, and the
// next run finishes, each migration recorded once.
func TestFaultServerRestartedUnderUp(t *testing.T) {
	t.Parallel() // a server process of its own
	dir := t.TempDir()
	server, uri := serveProcess(t, dir, "")
	addr := strings.TrimSuffix(strings.TrimPrefix(uri, "mongodb://"), "/")
	// The interrupted run gives up on the dead server after 2s instead of
	// the driver's default 30s of server selection: the same error, sooner.
	cmd := helperCmd(uri+"?serverSelectionTimeoutMS=2000", "up-slow")
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
