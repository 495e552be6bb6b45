package backfill_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// splitCommands returns the aggregate commands on items that ask for a
// $sample, and the finds on items that read _ids only (the exact split).
func splitCommands(t *testing.T, rec *cmdlog.Recorder) (samples, idScans []bson.Raw) {
	t.Helper()
	for _, c := range rec.Named("aggregate") {
		if c.Lookup("aggregate").StringValue() == "items" && strings.Contains(c.Lookup("pipeline").String(), "$sample") {
			samples = append(samples, c)
		}
	}
	for _, c := range rec.Named("find") {
		if c.Lookup("find").StringValue() == "items" && c.Lookup("projection").String() == `{"_id": {"$numberInt":"1"}}` {
			idScans = append(idScans, c)
		}
	}
	return samples, idScans
}

// rangeCheckpoints lists the plan and range checkpoints of items.
func rangeCheckpoints(t *testing.T, db *mongo.Database) []string {
	t.Helper()
	cur, err := db.Collection(backfill.Collection).Find(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^items\$`}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestBackfillSplitPointsSandbox: a parallel backfill first asks the
// server for a sample of the _ids (the exact command is pinned here, since
// the sandbox refuses it: FerretDB v1 has no $sample), then falls back to
// reading every _id below the target, and says so in the result.
func TestBackfillSplitPointsSandbox(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertItems(t, db, 300)
	r := counterRunner(t, db)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	// 300 documents, 3 workers, one range each on the sandbox (every range
	// costs a collection scan there): ranges of max(batch 10, 300/3) = 100.
	if c.Upgraded != 300 || !c.Proven || c.Ranges != 3 || !strings.Contains(c.RangeSplit, "the server has no $sample") {
		t.Errorf("%+v", c)
	}
	samples, idScans := splitCommands(t, rec)
	if len(samples) != 1 || len(idScans) != 1 {
		t.Fatalf("%d $sample aggregates and %d _id scans, want 1 and 1", len(samples), len(idScans))
	}
	// 3 ranges of 32 samples each.
	want := `[{"$sample": {"size": {"$numberLong":"96"}}},{"$project": {"_id": {"$numberInt":"1"}}},{"$sort": {"_id": {"$numberInt":"1"}}}]`
	if got := samples[0].Lookup("pipeline").String(); got != want {
		t.Errorf("pipeline\n got  %s\n want %s", got, want)
	}
	if got := idScans[0].Lookup("sort").String(); got != `{"_id": {"$numberInt":"1"}}` {
		t.Errorf("the exact split read sorted on %s", got)
	}
	checkItems(t, db, 300)
}

// TestBackfillSplitPointsMongoDB: on MongoDB the split points are
// quantiles of one $sample of the _ids; no _id is read in order.
func TestBackfillSplitPointsMongoDB(t *testing.T) {
	uriDB := sandboxtest.MongoDB(t, "mongomig_test_split", "the sandbox has no $sample (TestBackfillSplitPointsSandbox pins the command and the fallback)")
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor()))
	db := client.Database(uriDB.Name())
	ctx := context.Background()
	insertItems(t, db, 3000)
	r := counterRunner(t, db)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.Upgraded != 3000 || !c.Proven || c.Ranges < 2 || !strings.Contains(c.RangeSplit, "$sample") {
		t.Errorf("%+v", c)
	}
	samples, idScans := splitCommands(t, rec)
	if len(samples) != 1 || len(idScans) != 0 {
		t.Errorf("%d $sample aggregates and %d _id scans, want 1 and 0", len(samples), len(idScans))
	}
	checkItems(t, db, 3000)
	if left := rangeCheckpoints(t, db); len(left) != 0 {
		t.Errorf("range checkpoints left after the proof: %v", left)
	}
}

// TestBackfillWorkersCleanUp: once a parallel backfill is proven, the plan
// and range checkpoints of the collection (of this target and any other)
// are removed, those of other collections kept; a rerun walks no range
// again: it plans nothing, and its sweep counts the documents below the
// target and walks the collection only when some are.
func TestBackfillWorkersCleanUp(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertItems(t, db, 200)
	r := counterRunner(t, db)
	cps := db.Collection(backfill.Collection)
	// Left by an earlier target's backfill, and another collection's.
	if _, err := cps.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "items$plan$7"}, {Key: "target", Value: 7}, {Key: "splits", Value: bson.A{}}},
		bson.D{{Key: "_id", Value: "items$range$7$0"}, {Key: "target", Value: 7}, {Key: "done", Value: true}},
		bson.D{{Key: "_id", Value: "itemsold$range$1$0"}, {Key: "target", Value: 1}, {Key: "done", Value: true}},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 200 || !c.Proven || c.Ranges < 2 {
		t.Fatalf("%+v", c)
	}
	if left := rangeCheckpoints(t, db); len(left) != 0 {
		t.Errorf("range checkpoints left after the proof: %v", left)
	}
	if n, err := cps.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"items", "itemsold$range$1$0"}}}}}); err != nil || n != 2 {
		t.Errorf("the collection's checkpoint or another collection's range removed (%d of 2 left, %v)", n, err)
	}
	finds, inserts := len(rec.Named("find")), len(rec.Named("insert"))
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 0 || !c.Proven || c.Ranges != 0 {
		t.Errorf("rerun: %+v", c)
	}
	itemFinds := func(since int) []string {
		var out []string
		for _, c := range rec.Named("find")[since:] {
			if c.Lookup("find").StringValue() == "items" {
				out = append(out, c.Lookup("filter").String())
			}
		}
		return out
	}
	// Nothing is below the target: the sweep's count is the proof.
	if f := itemFinds(finds); len(f) != 0 {
		t.Errorf("rerun read items with %d finds, want none: %v", len(f), f)
	}
	for _, c := range rec.Named("insert")[inserts:] {
		if c.Lookup("insert").StringValue() == backfill.Collection {
			t.Errorf("rerun stored a plan: %s", c)
		}
	}
	if left := rangeCheckpoints(t, db); len(left) != 0 {
		t.Errorf("range checkpoints after the rerun: %v", left)
	}
	// An old writer's document since: the sweep walks once and upgrades
	// it, still no range.
	if _, err := db.Collection("items").InsertOne(ctx, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "i", Value: int32(200)}, {Key: "n", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	finds = len(rec.Named("find"))
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 10, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 1 || !c.Proven || c.Ranges != 0 {
		t.Errorf("rerun after an old writer: %+v", c)
	}
	if f := itemFinds(finds); len(f) != 1 || strings.Contains(f[0], "_id") {
		t.Errorf("rerun after an old writer read items with %d finds, want the sweep's one: %v", len(f), f)
	}
	checkItems(t, db, 201)
}

// TestBackfillWorkersRangesGoneMidRun: another backfill proves the
// collection and removes its range checkpoints while a parallel backfill
// is in a range: that backfill's workers find the target proven and start
// no other range (of 8), and its sweep leaves no checkpoint behind; every
// item is upgraded once.
func TestBackfillWorkersRangesGoneMidRun(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertItems(t, db, 200)
	var afterProof int
	r := counterRunner(t, db, runner.WithOwner("workers"))
	other := counterRunner(t, db, runner.WithOwner("single"))
	var proved *backfill.CollectionResult
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point != "backfill.batch" || proved != nil {
			return
		}
		res, err := backfill.Run(ctx, other, backfill.Options{Batch: 10})
		if err != nil {
			t.Errorf("the other backfill: %v", err)
			return
		}
		proved = &res.Collections[0]
		afterProof = len(rec.Named("find"))
		if left := rangeCheckpoints(t, db); len(left) != 0 {
			t.Errorf("range checkpoints after the other backfill's proof: %v", left)
		}
	})
	res, err := backfill.Run(ctx, r, backfill.WithRangesPerWorker(backfill.Options{Batch: 10, Workers: 2}, 4))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if proved == nil || !proved.Proven || !c.Proven || c.Upgraded >= 100 {
		t.Errorf("the other backfill %+v; this one %+v (upgraded in at most one range and the sweep)", proved, c)
	}
	if left := rangeCheckpoints(t, db); len(left) != 0 {
		t.Errorf("range checkpoints left: %v", left)
	}
	// After the proof only the other worker (which may have been about to
	// open its range) walks a range.
	ranges := 0
	for _, f := range rec.Named("find")[afterProof:] {
		// (A guarded write that found its document upgraded by the other
		// backfill re-reads it with $in: not a range.)
		if filter := f.Lookup("filter").String(); f.Lookup("find").StringValue() == "items" && strings.Contains(filter, `"_id"`) && !strings.Contains(filter, `"$in"`) {
			ranges++
		}
	}
	if c.Ranges != 8 || ranges > 1 {
		t.Errorf("%d of %d ranges walked after the proof, want at most 1", ranges, c.Ranges)
	}
	checkItems(t, db, 200)
}
