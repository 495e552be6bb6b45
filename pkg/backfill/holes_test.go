package backfill_test

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// ordersFS: 0001 gives orders a currency and moves total under totals, a
// two-step declarative upgrade.
var ordersFS = fstest.MapFS{"0001_totals.yaml": {Data: []byte(`collections:
  orders:
    upgrade:
      - default: {currency: EUR}
      - rename: {total: totals.gross}
`)}}

func ordersRunner(t *testing.T, db *mongo.Database, fsys fstest.MapFS, n int) *runner.Runner {
	t.Helper()
	r := newRunner(t, db, fsys)
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := db.Collection("orders").InsertOne(context.Background(), bson.D{{Key: "_id", Value: int32(i)}, {Key: "total", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func serverDB(t *testing.T, name string, rec *cmdlog.Recorder) *mongo.Database {
	t.Helper()
	sandboxtest.MongoDB(t, name, "pipeline updates need a server that has them; the sandbox's marker path: TestBackfillMarkersCarryTheNonce")
	return sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database(name)
}

func allOrders(t *testing.T, db *mongo.Database) []bson.D {
	t.Helper()
	cur, err := db.Collection("orders").Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.D
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestBackfillPipelineLeavesNoHalfUpgradedDocumentMongoDB: where the
// server has pipeline updates, each range is ONE pipeline update: between
// two updates no document carries a marker or a half-new shape (the
// marker path let release 42 serve and overwrite such an order), and
// the backfill counts what the updates modified.
func TestBackfillPipelineLeavesNoHalfUpgradedDocumentMongoDB(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	db := serverDB(t, "mongomig_test_pipeline_walk", rec)
	r := ordersRunner(t, db, ordersFS, 30)
	checked := 0
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point != "backfill.unit" {
			return
		}
		checked++
		for _, d := range allOrders(t, db) {
			_, marked := bsonx.Lookup(d, version.MarkerField)
			v, _ := bsonx.Lookup(d, "version")
			_, total := bsonx.Lookup(d, "total")
			_, currency := bsonx.Lookup(d, "currency")
			if marked || (v == nil) != total || (v == nil) == currency {
				t.Errorf("between two ranges: %v", d)
			}
		}
	})
	res, err := backfill.Run(ctx, r, backfill.Options{ServerRange: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.ServerSide != 30 || c.Upgraded != 30 || !c.Proven || checked != 3 {
		t.Fatalf("result %+v after %d checks; want 30 on the server in 3 ranges", c, checked)
	}
	updates := 0
	for _, cmd := range rec.Named("update") {
		if cmd.Lookup("update").StringValue() != "orders" {
			continue
		}
		for _, u := range mustArray(t, cmd.Lookup("updates")) {
			updates++
			if u.Document().Lookup("u").Type != bson.TypeArray {
				t.Errorf("update %s is not a pipeline", u.Document())
			}
		}
	}
	if updates != 3 {
		t.Errorf("%d updates for 3 ranges", updates)
	}
}

// renameOnto: order 1's totals.gross holds a value different from its
// total, so 0001's rename would replace it.
func renameOnto(t *testing.T, db *mongo.Database) bson.D {
	t.Helper()
	if _, err := db.Collection("orders").UpdateOne(context.Background(), bson.D{{Key: "_id", Value: int32(1)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "totals", Value: bson.D{{Key: "gross", Value: int32(99)}}}}}}); err != nil {
		t.Fatal(err)
	}
	return allOrders(t, db)[1]
}

// checkRenameTargetKept: when the client path starts (after the server
// side), order 1 is as stored: the server-side path never replaced the
// value at the rename's target (the client path judges it,
// as the lazy path does).
func checkRenameTargetKept(t *testing.T, db *mongo.Database, r *runner.Runner, opts backfill.Options) {
	t.Helper()
	want := renameOnto(t, db)
	seen := false
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.read" && !seen {
			seen = true
			// (The marker path may have applied the default before the
			// rename and left its marker: the client path resumes it.)
			got := allOrders(t, db)[1]
			gross, _ := bsonx.Lookup(got, "totals")
			total, _ := bsonx.Lookup(got, "total")
			if v, _ := bsonx.Lookup(got, "version"); v != nil || total != int32(1) || sorted(bson.D{{Key: "t", Value: gross}}) != sorted(bson.D{{Key: "t", Value: bson.D{{Key: "gross", Value: int32(99)}}}}) {
				t.Errorf("the server-side path replaced order 1's totals.gross:\n got %v\nwant %v", got, want)
			}
		}
	})
	res, err := backfill.Run(context.Background(), r, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; !seen || c.ServerSide != 9 {
		t.Errorf("result %+v: want 9 on the server side and order 1 left to the client path", c)
	}
}

func TestBackfillServerSideNeverReplacesARenameTarget(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	r := ordersRunner(t, db, ordersFS, 10)
	checkRenameTargetKept(t, db, r, backfill.Options{ServerSide: true, AssumeNoWriters: true})
}

func TestBackfillServerSideNeverReplacesARenameTargetMongoDB(t *testing.T) {
	db := serverDB(t, "mongomig_test_rename_onto", &cmdlog.Recorder{})
	r := ordersRunner(t, db, ordersFS, 10)
	checkRenameTargetKept(t, db, r, backfill.Options{})
}

// TestBackfillCountsOnlyItsOwnWrites: the application upgrades (writes
// back) 4 of a batch's documents between the backfill's read and its
// guarded write: those writes match nothing, and this run counts only
// what it wrote (it used to count them too).
func TestBackfillCountsOnlyItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	r := counterRunner(t, db)
	items := db.Collection("items")
	once := false
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point != "backfill.read" || once {
			return
		}
		once = true
		cur, err := items.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(4))
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.D
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			up, _, err := r.Registry().Upgrade("items", d)
			if err != nil {
				t.Fatal(err)
			}
			if won, err := r.Registry().WriteBack(ctx, items, d, up); err != nil || !won {
				t.Fatalf("write-back: %v %v", won, err)
			}
		}
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 26 || c.TotalUpgraded != 26 || !c.Proven {
		t.Errorf("result %+v: want 26 upgraded by the backfill (4 by the application)", c)
	}
	checkItems(t, db, 30)
}

// TestBackfillServerSideRefusesInvalidUpgrades: on the sandbox's
// server-side path, which enforces no validator, users 7 and 23 (whose
// upgrade lacks the contact 0003 requires) are not written and are
// listed, as on the client path (they used to be written).
func TestBackfillServerSideRefusesInvalidUpgrades(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleAppliedWith(t, false)
	res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ServerSide: true, AssumeNoWriters: true})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.ServerSide != 38 || len(c.Failed) != 1 || c.Failed[0].Rule != "validator" || c.Failed[0].Count != 2 || c.Proven {
		t.Fatalf("result %+v: want 38 on the server, users 7 and 23 listed", c)
	}
	var u bson.M
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$exists", Value: true}}}, {Key: "contact", Value: bson.D{{Key: "$exists", Value: false}}}, {Key: "version", Value: int32(3)}}).Decode(&u); err == nil {
		t.Errorf("a user was written at version 3 without contact: %v", u)
	}
}

// TestBackfillServerSideRefusesInvalidUpgradesMongoDB: a server that does
// not keep the collection's validator (stock FerretDB 2 drops it) gets the
// same stored result on the pipeline path: the order without a total,
// whose upgrade lacks the totals the schema requires, is not written.
func TestBackfillServerSideRefusesInvalidUpgradesMongoDB(t *testing.T) {
	ctx := context.Background()
	db := serverDB(t, "mongomig_test_invalid_pipeline", &cmdlog.Recorder{})
	fsys := fstest.MapFS{"0001_totals.yaml": {Data: []byte(string(ordersFS["0001_totals.yaml"].Data) +
		"    validator: {$jsonSchema: {required: [totals]}}\n    validationAction: error\n")}}
	r := ordersRunner(t, db, fsys, 10)
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "orders"}, {Key: "validator", Value: bson.D{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("orders").UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(4)}}, bson.D{{Key: "$unset", Value: bson.D{{Key: "total", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.ServerSide != 9 || len(c.Failed) != 1 || c.Failed[0].Count != 1 {
		t.Fatalf("result %+v: want 9 on the server and order 4 listed", c)
	}
	if v, _ := bsonx.Lookup(allOrders(t, db)[4], "version"); v != nil {
		t.Errorf("order 4 was written: %v", allOrders(t, db)[4])
	}
}

// TestBackfillMarkersCarryTheNonce: where markers remain (the sandbox,
// without pipeline updates), each carries the nonce the backfill keeps in
// mongomig_backfill; a well-formed marker without it (the application's
// insert, say) is never resumed from: its document is listed, not
// upgraded past the step it claims.
func TestBackfillMarkersCarryTheNonce(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := ordersRunner(t, db, ordersFS, 10)
	reg := r.Registry()
	plan, _ := reg.ServerPlan("orders", 0)
	// Claims the default is done: resuming from it would skip currency.
	if _, err := db.Collection("orders").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(50)}, {Key: "total", Value: int32(1)}, {Key: version.MarkerField, Value: plan.Marker(1)}}); err != nil {
		t.Fatal(err)
	}
	var nonce string
	backfill.SetHook(r, func(point string, _ int64, k int) {
		if point != "backfill.unit" || k != 1 || nonce != "" {
			return
		}
		var d bson.D
		if err := db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: int32(0)}}).Decode(&d); err != nil {
			t.Fatal(err)
		}
		v, _ := bsonx.Lookup(d, version.MarkerField)
		m, ok := version.ParseMarker(v)
		stored, err := state.New(db).MarkerNonce(ctx, "orders", 1, false)
		if !ok || m.Nonce == "" || err != nil || m.Nonce != stored {
			t.Errorf("marker %v, stored nonce %q (%v): want the stored nonce in the marker", v, stored, err)
		}
		nonce = m.Nonce
	})
	for _, opts := range []backfill.Options{{ServerSide: true, AssumeNoWriters: true}, {ClientSide: true}} {
		res, err := backfill.Run(ctx, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Collections[0]
		if len(c.Failed) != 1 || c.Failed[0].Count != 1 || !strings.Contains(c.Failed[0].ExampleIDs[0], "50") || !strings.Contains(c.Failed[0].Message, "not written by this backfill") {
			t.Errorf("%+v: result %+v; want the forged marker's document listed", opts, c)
		}
	}
	if nonce == "" {
		t.Error("no marker seen")
	}
	if v, _ := bsonx.Lookup(allOrders(t, db)[10], "version"); v != nil {
		t.Errorf("the forged marker's document was upgraded: %v", allOrders(t, db)[10])
	}
}

// TestBackfillRefusesAForgedPlan: a stored range plan of 200,000 split
// points (mongomig never stores more than state.MaxPlanSplits) is refused,
// naming its document, instead of stalling a backfill of 300 documents.
func TestBackfillRefusesAForgedPlan(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	r := counterRunner(t, db)
	splits := make(bson.A, 200000)
	for i := range splits {
		splits[i] = int32(i)
	}
	if _, err := db.Collection(state.Collection).InsertOne(ctx, bson.D{{Key: "_id", Value: "items$plan$1"}, {Key: "target", Value: int64(1)}, {Key: "splits", Value: splits}}); err != nil {
		t.Fatal(err)
	}
	_, err := backfill.Run(ctx, r, backfill.Options{Workers: 2})
	if !errors.Is(err, state.ErrForgedPlan) || !strings.Contains(err.Error(), `"items$plan$1"`) || !strings.Contains(err.Error(), "200000") {
		t.Fatalf("backfill over a forged plan: %v", err)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Workers: backfill.MaxWorkers + 1}); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Fatalf("workers above the cap: %v", err)
	}
}

// sorted is d's extended JSON with its top-level fields in name order.
func sorted(d bson.D) string {
	c := append(bson.D{}, d...)
	sort.SliceStable(c, func(i, j int) bool { return c[i].Key < c[j].Key })
	b, _ := bson.MarshalExtJSON(c, true, false)
	return string(b)
}
