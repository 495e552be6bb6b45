package backfill_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// updatesPerID counts, in the update commands sent since before, the
// statements filtering on each _id.
func updatesPerID(t *testing.T, rec *cmdlog.Recorder, before int) map[string]int {
	t.Helper()
	per := map[string]int{}
	for _, cmd := range rec.Named("update")[before:] {
		coll := cmd.Lookup("update").StringValue()
		if strings.HasPrefix(coll, "mongomig_") {
			continue // checkpoints and leases
		}
		for _, u := range mustArray(t, cmd.Lookup("updates")) {
			id := u.Document().Lookup("q", "_id")
			per[coll+":"+id.String()]++
		}
	}
	return per
}

func TestBackfillWorkersSampleData(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	before := len(rec.Named("update"))
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, ClientSide: true, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"comments": 36, "orders": 60, "posts": 12, "users": 40}
	var sum int64
	for _, c := range res.Collections {
		if c.Upgraded != want[c.Collection] || c.TotalUpgraded != want[c.Collection] || !c.Complete || !c.Proven || c.Conflicts != 0 || len(c.Failed) != 0 {
			t.Errorf("%s: %+v", c.Collection, c)
		}
		sum += want[c.Collection]
	}
	if len(res.Collections) != len(want) {
		t.Errorf("%d collections, want %d", len(res.Collections), len(want))
	}
	per := updatesPerID(t, rec, before)
	if int64(len(per)) != sum {
		t.Errorf("%d documents written, want %d", len(per), sum)
	}
	for id, n := range per {
		if n != 1 {
			t.Errorf("%s written %d times", id, n)
		}
	}
	// Several ranges were planned; once proven, their checkpoints are gone.
	for _, c := range res.Collections {
		if c.Collection == "orders" && c.Ranges < 3 {
			t.Errorf("orders: %d ranges, want several", c.Ranges)
		}
	}
	n, err := db.Collection(backfill.Collection).CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `\$(plan|range)\$`}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d plan and range checkpoints left after the proof", n)
	}
	// A rerun finds nothing to do and still proves.
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 5, ClientSide: true, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Collections {
		if c.Upgraded != 0 || !c.Proven {
			t.Errorf("rerun %s: %+v", c.Collection, c)
		}
	}
}

func TestBackfillWorkersTwoProcesses(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 300)
	r1 := counterRunner(t, db, runner.WithOwner("one"))
	r2 := counterRunner(t, db, runner.WithOwner("two"))
	var wg sync.WaitGroup
	results := make([]*backfill.Result, 2)
	errs := make([]error, 2)
	for i, r := range []*runner.Runner{r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 2})
		}()
	}
	wg.Wait()
	var upgraded int64
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("runner %d: %v", i+1, errs[i])
		}
		c := results[i].Collections[0]
		if !c.Complete || !c.Proven || len(c.Failed) != 0 {
			t.Errorf("runner %d: %+v", i+1, c)
		}
		upgraded += c.Upgraded
		t.Logf("runner %d upgraded %d", i+1, c.Upgraded)
	}
	if upgraded != 300 {
		t.Errorf("upgraded %d in all, want 300", upgraded)
	}
	checkItems(t, db, 300)
	if left := rangeCheckpoints(t, db); len(left) != 0 {
		t.Errorf("range checkpoints left after both proofs: %v", left)
	}
}

func TestBackfillWorkersTakeOverADeadWorkersRange(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 200)
	var mu sync.Mutex
	var takenOver []string
	r := counterRunner(t, db, runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if e.Kind() == "lock.takenOver" {
			mu.Lock()
			takenOver = append(takenOver, e.String())
			mu.Unlock()
		}
	})))
	// A worker killed while it held range 0: its lease document stays
	// until it expires.
	now := time.Now()
	if _, err := db.Collection(runner.DefaultLockCollection).InsertOne(ctx, bson.D{
		{Key: "_id", Value: "backfill:items:v1:range:0"}, {Key: "owner", Value: "dead-worker"}, {Key: "token", Value: "t"},
		{Key: "host", Value: "gone"}, {Key: "pid", Value: 1}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(1500 * time.Millisecond)},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.Upgraded != 200 || !c.Complete || !c.Proven {
		t.Errorf("%+v", c)
	}
	checkItems(t, db, 200)
	mu.Lock()
	defer mu.Unlock()
	if len(takenOver) == 0 {
		t.Error("the dead worker's range lease was not taken over")
	}
	var leases []bson.M
	cur, err := db.Collection(runner.DefaultLockCollection).Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &leases); err != nil {
		t.Fatal(err)
	}
	if len(leases) != 0 {
		t.Errorf("leases left behind: %v", leases)
	}
}

// TestBackfillWorkersProcessKilled runs two backfill processes with two
// workers each and SIGKILLs one mid-run: the other takes over its ranges
// once their leases expire, and a rerun finds nothing left; every item is
// transformed exactly once.
func TestBackfillWorkersProcessKilled(t *testing.T) {
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	const docs = 300
	rng := rand.New(rand.NewPCG(13, 13))
	killed, n := 0, trials(3)
	for trial := 0; trial < n; trial++ {
		ctx := context.Background()
		_ = db.Collection("items").Drop(ctx)
		_, _ = db.Collection(backfill.Collection).DeleteMany(ctx, bson.D{})
		insertItems(t, db, docs)
		victim, survivor := workersHelper(srv.URI()), workersHelper(srv.URI())
		var out strings.Builder
		survivor.Stdout, survivor.Stderr = &out, &out
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		if err := survivor.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the victim while it holds a range lease, a little into it.
		for wait := time.Now(); ; time.Sleep(5 * time.Millisecond) {
			n, err := db.Collection(runner.DefaultLockCollection).CountDocuments(ctx, bson.D{{Key: "pid", Value: victim.Process.Pid}, {Key: "_id", Value: bson.D{{Key: "$regex", Value: `^backfill:items:v1:range:`}}}})
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Since(wait) > 20*time.Second {
				t.Fatalf("trial %d: the victim never held a range", trial)
			}
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		_ = victim.Process.Signal(syscall.SIGKILL)
		err := victim.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			killed++
		}
		if err := survivor.Wait(); err != nil {
			t.Fatalf("trial %d: survivor: %v\n%s", trial, err, out.String())
		}
		t.Logf("trial %d: survivor: %s", trial, strings.TrimSpace(out.String()))
		if !strings.Contains(out.String(), "proven true") {
			t.Errorf("trial %d: survivor: %s", trial, out.String())
		}
		checkItems(t, db, docs)
		rerun, err := workersHelper(srv.URI()).CombinedOutput()
		if err != nil || !strings.Contains(string(rerun), "upgraded 0,") || !strings.Contains(string(rerun), "proven true") {
			t.Fatalf("trial %d: rerun: %v\n%s", trial, err, rerun)
		}
		checkItems(t, db, docs)
	}
	if killed == 0 {
		t.Errorf("no kill landed mid-run in %d trials; the test does not test takeover", n)
	}
	t.Logf("%d trials, %d worker processes killed mid-run", n, killed)
}

func workersHelper(uri string) *exec.Cmd {
	cmd := backfillHelper(uri, "app")
	cmd.Env = append(cmd.Env, "MONGOMIG_HELPER_WORKERS=2")
	return cmd
}

func TestBackfillWorkersStopAndResume(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 200)
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 2 {
			cancel()
		}
	})
	res, err := backfill.Run(cctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Collections[0]
	if res.Stopped != "interrupted" || first.Complete || first.Upgraded == 0 || first.Upgraded >= 200 {
		t.Fatalf("first run: stopped %q, %+v", res.Stopped, first)
	}
	backfill.SetHook(r, nil)
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	second := res.Collections[0]
	if !second.Complete || !second.Proven || first.Upgraded+second.Upgraded != 200 {
		t.Errorf("second run: %+v (first upgraded %d)", second, first.Upgraded)
	}
	checkItems(t, db, 200)
}
