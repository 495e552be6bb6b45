package backfill_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// onColl keeps the commands of rec named name that target collection coll.
func onColl(rec *cmdlog.Recorder, name, coll string) []bson.Raw {
	var out []bson.Raw
	for _, c := range rec.Named(name) {
		if s, ok := c.Lookup(name).StringValueOK(); ok && s == coll {
			out = append(out, c)
		}
	}
	return out
}

// TestBackfillOnePass: the client path reads the collection with one find
// and getMores on that cursor, never a query per batch; stopped and run
// again, it resumes with one {_id: {$gt: last}} find.
func TestBackfillOnePass(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertItems(t, db, 120)
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 5 {
			cancel()
		}
	})
	res, err := backfill.Run(cctx, r, backfill.Options{Batch: 10})
	if err != nil || res.Stopped != "interrupted" || res.Collections[0].Upgraded != 50 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if finds, gets := onColl(rec, "find", "items"), rec.Named("getMore"); len(finds) != 1 || len(gets) != 4 {
		t.Errorf("5 batches read with %d finds and %d getMores; want 1 find, 4 getMores", len(finds), len(gets))
	}
	var cp bson.M
	if err := db.Collection(backfill.Collection).FindOne(ctx, bson.D{{Key: "_id", Value: "items"}}).Decode(&cp); err != nil {
		t.Fatal(err)
	}

	backfill.SetHook(r, nil)
	rec.Reset()
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil || !res.Collections[0].Resumed || res.Collections[0].Upgraded != 70 || !res.Collections[0].Proven {
		t.Fatalf("resumed run: %+v %v", res, err)
	}
	finds := onColl(rec, "find", "items")
	if len(finds) != 1 {
		t.Fatalf("resumed with %d finds, want 1", len(finds))
	}
	if f := finds[0].Lookup("filter").String(); !strings.Contains(f, `"$gt"`) || !strings.Contains(f, cp["lastId"].(bson.ObjectID).Hex()) {
		t.Errorf("resume filter %s; want {_id: {$gt: %v}}", f, cp["lastId"])
	}
	checkItems(t, db, 120)
}

// backfillWrites runs a counter backfill of 30 items with opts and
// returns the update statements it sent and the events it emitted.
func backfillWrites(t *testing.T, db *mongo.Database, rec *cmdlog.Recorder, opts backfill.Options) ([]bson.Raw, []events.Entry) {
	t.Helper()
	insertItems(t, db, 30)
	var mu sync.Mutex
	var got []events.Entry
	r := counterRunner(t, db, runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
	})))
	opts.Batch = 10
	res, err := backfill.Run(context.Background(), r, opts)
	if err != nil || res.Collections[0].Upgraded != 30 || !res.Collections[0].Proven {
		t.Fatalf("backfill: %+v %v", res, err)
	}
	checkItems(t, db, 30)
	var stmts []bson.Raw
	for _, cmd := range onColl(rec, "update", "items") {
		for _, u := range mustArray(t, cmd.Lookup("updates")) {
			stmts = append(stmts, u.Document())
		}
	}
	if len(stmts) != 30 {
		t.Fatalf("%d update statements for 30 documents", len(stmts))
	}
	return stmts, got
}

func filterKeys(t *testing.T, stmt bson.Raw) []string {
	t.Helper()
	elems, err := stmt.Lookup("q").Document().Elements()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	return keys
}

// notices counts the events of kind and checks each is one line naming
// FerretDB when it must.
func notices(t *testing.T, evs []events.Entry, kind string, ferret bool) int {
	t.Helper()
	n := 0
	for _, e := range evs {
		if e.Kind() != kind {
			continue
		}
		n++
		if (ferret && !strings.Contains(e.String(), "FerretDB")) || strings.Contains(e.String(), "\n") {
			t.Errorf("notice %q: want one line naming the server", e.String())
		}
	}
	return n
}

// TestBackfillGuardedByDefaultOnEveryServer: on FerretDB v1 too, where a
// guard costs a collection scan, the default backfill guards every write
// on the old values (the default used to write by _id alone there and lost
// 187 of 1,363 acknowledged application edits), and one
// notice says what a guard costs there; only --assume-no-writers writes by
// _id alone, and its notice says what it assumes.
func TestBackfillGuardedByDefaultOnEveryServer(t *testing.T) {
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	stmts, evs := backfillWrites(t, db, rec, backfill.Options{})
	for _, s := range stmts {
		if keys := filterKeys(t, s); len(keys) < 3 || keys[0] != "_id" {
			t.Fatalf("write filtered on %v on FerretDB by default; want _id, n and version", keys)
		}
	}
	if n := notices(t, evs, "backfill.guardScans", true); n != 1 {
		t.Errorf("%d backfill.guardScans notices, want 1", n)
	}
	if n := notices(t, evs, "backfill.unguarded", false); n != 0 {
		t.Errorf("%d backfill.unguarded notices by default", n)
	}

	rec.Reset()
	db2 := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app2")
	stmts, evs = backfillWrites(t, db2, rec, backfill.Options{AssumeNoWriters: true})
	for _, s := range stmts {
		if keys := filterKeys(t, s); len(keys) != 1 || keys[0] != "_id" {
			t.Fatalf("write filtered on %v with AssumeNoWriters; want _id alone", keys)
		}
	}
	if n := notices(t, evs, "backfill.unguarded", true); n != 1 {
		t.Errorf("%d backfill.unguarded notices with AssumeNoWriters, want 1", n)
	}
	for _, e := range evs {
		if e.Kind() == "backfill.unguarded" && !strings.Contains(e.String(), "no application writes") {
			t.Errorf("notice %q does not say what it assumes", e.String())
		}
	}
}

// TestBackfillServerSideNeedsAssumptionWhereUnguarded: on FerretDB v1 the
// server-side path cannot be guarded, so ServerSide alone is refused, and
// no option switches it on as a side effect (--always-guard once did).
func TestBackfillServerSideNeedsAssumptionWhereUnguarded(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 5)
	r := counterRunner(t, db)
	_, err := backfill.Run(context.Background(), r, backfill.Options{ServerSide: true})
	if !errors.Is(err, backfill.ErrUnguardedServerSide) || !strings.Contains(err.Error(), "FerretDB v1") {
		t.Fatalf("ServerSide on FerretDB v1: %v, want ErrUnguardedServerSide naming the server", err)
	}
	res, err := backfill.Run(context.Background(), r, backfill.Options{})
	if err != nil || res.Collections[0].ServerSide != 0 {
		t.Fatalf("default run on FerretDB v1: %+v %v; want the client path", res, err)
	}
}

// TestBackfillWritesByCapabilityMongoDB: on MongoDB every client-path
// write is a guarded delta (filtered on _id and the old value of each
// field it changes, the version included, or, the counter's func step
// reading the whole document, on _id and the document as read), and no
// notice is emitted.
func TestBackfillWritesByCapabilityMongoDB(t *testing.T) {
	uriDB := sandboxtest.MongoDB(t, "mongomig_test_guarded", "FerretDB v1's writes: TestBackfillGuardedByDefaultOnEveryServer")
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor()))
	db := client.Database(uriDB.Name())
	stmts, evs := backfillWrites(t, db, rec, backfill.Options{ClientSide: true})
	for _, s := range stmts {
		keys := filterKeys(t, s)
		if len(keys) == 2 && keys[0] == "_id" && keys[1] == "$expr" {
			// The counter's func step reads the whole document: one clause
			// guards it as read (version.WholeFilter).
			lit, ok := s.Lookup("q", "$expr", "$eq").Array().Index(1).Document().Lookup("$literal").DocumentOK()
			if _, hasN := lit.Lookup("n").Int32OK(); !ok || !hasN {
				t.Fatalf("write filtered on %v; want the document as read (its n) in the clause", s.Lookup("q"))
			}
			continue
		}
		if len(keys) < 3 || keys[0] != "_id" {
			t.Fatalf("write filtered on %v on MongoDB; want _id, n and version", keys)
		}
	}
	for _, e := range evs {
		if e.Kind() == "backfill.unguarded" || e.Kind() == "backfill.guardScans" {
			t.Errorf("unexpected notice on MongoDB: %s", e.String())
		}
	}
}

// TestBackfillFailuresRemain: a document its upgrade cannot transform is
// left at its version, listed with its _id, and the result says failures
// remain (what makes the command exit non-zero); once fixed, a second run
// upgrades it and nothing remains.
func TestBackfillFailuresRemain(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 20)
	bad := bson.NewObjectID()
	if _, err := db.Collection("items").InsertOne(ctx, bson.D{{Key: "_id", Value: bad}, {Key: "i", Value: int32(20)}, {Key: "n", Value: "not a number"}}); err != nil {
		t.Fatal(err)
	}
	r := counterRunner(t, db)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if !res.FailuresRemain() || c.Upgraded != 20 || c.Proven || len(c.Failed) != 1 || !strings.Contains(strings.Join(c.Failed[0].ExampleIDs, " "), bad.Hex()) {
		t.Fatalf("result %+v: want the bad document listed and failures remaining", c)
	}
	if _, err := db.Collection("items").UpdateOne(ctx, bson.D{{Key: "_id", Value: bad}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: int32(0)}}}}); err != nil {
		t.Fatal(err)
	}
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil || res.FailuresRemain() || !res.Collections[0].Proven || res.Collections[0].Upgraded != 1 {
		t.Fatalf("after the fix: %+v %v", res, err)
	}
	checkItems(t, db, 21)
}

// A run that resumes where a stopped one left off still lists the
// failures behind that point, and says they remain (exit 1 in the CLI):
// found by a new-user trial, where the resumed run exited 0 with
// failed: [] while status counted the bad documents.
func TestBackfillResumedListsFailuresBehindTheCheckpoint(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	bad := bson.NewObjectID() // the first _id: behind any checkpoint
	if _, err := db.Collection("items").InsertOne(ctx, bson.D{{Key: "_id", Value: bad}, {Key: "i", Value: int32(-1)}, {Key: "n", Value: "not a number"}}); err != nil {
		t.Fatal(err)
	}
	insertItems(t, db, 40)
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 2 {
			cancel()
		}
	})
	res, err := backfill.Run(cctx, r, backfill.Options{Batch: 10})
	if err != nil || res.Stopped != "interrupted" {
		t.Fatalf("first run: %+v %v", res, err)
	}
	backfill.SetHook(r, nil)
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if !c.Resumed || !c.Complete || c.Proven || !res.FailuresRemain() || len(c.Failed) != 1 ||
		c.Failed[0].Count != 1 || !strings.Contains(strings.Join(c.Failed[0].ExampleIDs, " "), bad.Hex()) {
		t.Fatalf("resumed run = %+v: want the bad document behind the checkpoint listed once", c)
	}
	if c.TotalUpgraded != 40 {
		t.Errorf("total upgraded = %d, want 40", c.TotalUpgraded)
	}
}
