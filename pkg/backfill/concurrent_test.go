package backfill_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestBackfillConcurrentWriterNeverOverwritten interleaves an application
// write between the backfill's read and its write (deterministically: the
// sandbox does not make conditional updates atomic under true
// concurrency). The write survives and the document is upgraded from it.
func TestBackfillConcurrentWriterNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 10)
	items := db.Collection("items")
	var first bson.D
	if err := items.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}})).Decode(&first); err != nil {
		t.Fatal(err)
	}
	r := counterRunner(t, db)
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.read" {
			// The application bumps n (a field the upgrade changes) and
			// writes another field, between our read and our write.
			if _, err := items.UpdateOne(ctx, bson.D{{Key: "_id", Value: first[0].Value}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int32(5)}, {Key: "note", Value: "app"}}}}); err != nil {
				t.Error(err)
			}
			backfill.SetHook(r, nil)
		}
	})
	// Guarded by default on every server, the sandbox included (issue
	// 24, hole 9).
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 20})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 10 || c.Conflicts != 0 || !c.Proven {
		t.Errorf("result = %+v", c)
	}
	var got bson.M
	if err := items.FindOne(ctx, bson.D{{Key: "_id", Value: first[0].Value}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got["note"] != "app" || got["n"] != int32(6) || got["version"] != int32(1) {
		t.Errorf("document = %v; want the application's write kept and upgraded from it (n 5 -> 6)", got)
	}
}

// TestBackfillKilledRepeatedly kills a backfill process at random points
// 20 times (MONGOMIG_TRIALS for more), restarting it each time; at the end every document is at the
// current version, transformed exactly once, and none is lost. Trials run
// a few at a time, each group on a server of its own (one server's single
// writer, shared, answers too late for the backfill's 1 s leases): most of
// a trial is the wait for a killed process's leases to expire, which
// trials can share.
func TestBackfillKilledRepeatedly(t *testing.T) {
	const docs, together = 150, 3
	var killed atomic.Int64
	n := trials(20)
	next := make(chan int)
	var wg sync.WaitGroup
	for range together {
		wg.Add(1)
		srv := sandboxtest.Start(t)
		client := sandboxtest.Connect(t, srv.URI())
		go func() {
			defer wg.Done()
			for trial := range next {
				t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) {
					killed.Add(int64(killTrial(t, srv.URI(), client.Database(fmt.Sprintf("app%d", trial)), uint64(trial), docs)))
				})
			}
		}()
	}
	for trial := 0; trial < n; trial++ {
		next <- trial
	}
	close(next)
	wg.Wait()
	if k := killed.Load(); k < int64(n/2) {
		t.Errorf("only %d kills landed mid-run in %d trials; the test does not test resumption", k, n)
	}
	t.Logf("backfill: %d trials, %d processes killed mid-run, 0 failures", n, killed.Load())
}

// killTrial is one trial of TestBackfillKilledRepeatedly on db: it kills
// the backfill once or twice in a row at random points, then lets it
// finish, checks every document, and returns how many kills landed
// mid-run.
func killTrial(t *testing.T, uri string, db *mongo.Database, seed uint64, docs int) int {
	rng := rand.New(rand.NewPCG(7, seed))
	_ = db.Drop(context.Background())
	insertItems(t, db, docs)
	killed := 0
	for k := 0; k < 1+rng.IntN(2); k++ {
		cmd := backfillHelper(uri, db.Name())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(40+rng.IntN(300)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		}
	}
	out, err := backfillHelper(uri, db.Name()).CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	checkItems(t, db, docs)
	return killed
}

// backfillHelper is a backfill process (helperBackfill) on database db.
func backfillHelper(uri, db string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MONGOMIG_HELPER_URI="+uri, "MONGOMIG_HELPER_MODE=backfill", "MONGOMIG_HELPER_DB="+db)
	return cmd
}

// helperBackfill is the backfill process TestBackfillKilledRepeatedly kills.
func helperBackfill(db *mongo.Database) int {
	r, err := runner.New(db, counterFS, runner.WithVersionOptions(version.WithFunc("incN", incN)),
		runner.WithLockLease(time.Second), runner.WithLockWait(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := r.Up(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workers, _ := strconv.Atoi(os.Getenv("MONGOMIG_HELPER_WORKERS"))
	// Four ranges per worker, as on MongoDB: the sandbox's default of one
	// would let the first process's workers take every range.
	res, err := backfill.Run(context.Background(), r, backfill.WithRangesPerWorker(backfill.Options{Batch: 10, Rate: 300, Workers: workers}, 4))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := res.Collections[0]
	fmt.Printf("upgraded %d, total %d, resumed %v, proven %v\n", c.Upgraded, c.TotalUpgraded, c.Resumed, c.Proven)
	return 0
}

// TestBackfillWithWritersMongoDB runs application writers during a
// backfill on a real MongoDB: no write is lost.
func TestBackfillWithWritersMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_backfill", "truly concurrent writers need MongoDB's atomic updates (the sandbox interleaving is TestBackfillConcurrentWriterNeverOverwritten)")
	ctx := context.Background()
	const docs = 500
	insertItems(t, db, docs)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	const writers = 4
	incs := make([]int, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.Collection("items").UpdateOne(ctx, bson.D{{Key: "i", Value: int32(rand.IntN(docs))}}, bson.D{{Key: "$inc", Value: bson.D{{Key: fmt.Sprintf("w%d", w), Value: 1}}}}); err == nil {
					incs[w]++
				}
			}
		}()
	}
	res, err := backfill.Run(ctx, counterRunner(t, db), backfill.Options{Batch: 50})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backfill: %+v", res.Collections[0])
	// A document a writer changed between the read and the write twice
	// is left alone, counted (for the next backfill): with the writers
	// stopped, the next run upgrades exactly those.
	if c := res.Collections[0]; c.Conflicts > 0 {
		if c.Proven {
			t.Errorf("proven with %d conflicts left", c.Conflicts)
		}
		again, err := backfill.Run(ctx, counterRunner(t, db), backfill.Options{Batch: 50})
		if err != nil {
			t.Fatal(err)
		}
		if a := again.Collections[0]; a.Upgraded != c.Conflicts || !a.Proven {
			t.Errorf("second run upgraded %d (proven %v), want the %d conflicts of the first", a.Upgraded, a.Proven, c.Conflicts)
		}
	}
	checkItems(t, db, docs)
	for w := 0; w < writers; w++ {
		pipeline := mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "s", Value: bson.D{{Key: "$sum", Value: fmt.Sprintf("$w%d", w)}}}}}}}
		cur, err := db.Collection("items").Aggregate(ctx, pipeline)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			S int64 `bson:"s"`
		}
		if err := cur.All(ctx, &rows); err != nil || len(rows) != 1 || rows[0].S != int64(incs[w]) {
			t.Errorf("writer %d: %d increments acknowledged, %v stored (%v): writes lost", w, incs[w], rows, err)
		}
	}
}
