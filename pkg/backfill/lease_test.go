package backfill_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/runner"
)

// takeOver replaces the lease id with a live one of another process, as a
// contender does once the lease expired by the server's clock.
func takeOver(ctx context.Context, t *testing.T, db *mongo.Database, id string) {
	locks := db.Collection(runner.DefaultLockCollection)
	if _, err := locks.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		t.Error(err)
	}
	now := time.Now()
	if _, err := locks.InsertOne(ctx, bson.D{
		{Key: "_id", Value: id}, {Key: "owner", Value: "new-holder"}, {Key: "token", Value: "new"},
		{Key: "host", Value: "elsewhere"}, {Key: "pid", Value: 2}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(5 * time.Second)},
	}); err != nil {
		t.Error(err)
	}
}

// TestBackfillLostLeaseKeepsTheNewHoldersCheckpoint: a backfill whose
// collection lease is taken over after its first batch (it was paused past
// its lease) stops with lease.ErrLost, whether it notices at its next fence or
// when its heartbeat fails, and writes nothing more: neither a batch nor its
// checkpoint, which the new holder owns. It used to save its checkpoint
// over the new holder's (its _id and count going back), and, when the
// heartbeat noticed first, to report the run "interrupted", as if stopped
// by Ctrl-C, with no error.
func TestBackfillLostLeaseKeepsTheNewHoldersCheckpoint(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 100)
	r := counterRunner(t, db)
	cps := db.Collection(backfill.Collection)
	newHolders := bson.D{{Key: "_id", Value: "items"}, {Key: "target", Value: int64(1)}, {Key: "lastId", Value: "new-holder"}, {Key: "upgraded", Value: int64(12345)}, {Key: "done", Value: false}}
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point != "backfill.batch" || i != 1 {
			return
		}
		takeOver(ctx, t, db, "backfill:items")
		if _, err := cps.DeleteOne(ctx, bson.D{{Key: "_id", Value: "items"}}); err != nil {
			t.Error(err)
		}
		if _, err := cps.InsertOne(ctx, newHolders); err != nil {
			t.Error(err)
		}
		// Leave the heartbeat (a quarter lease) time to notice first.
		time.Sleep(time.Second)
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if !errors.Is(err, lease.ErrLost) {
		t.Errorf("backfill whose lease was taken over: %v (stopped %q); want lease.ErrLost", err, res.Stopped)
	}
	var cp bson.M
	if err := cps.FindOne(ctx, bson.D{{Key: "_id", Value: "items"}}).Decode(&cp); err != nil {
		t.Fatal(err)
	}
	if cp["lastId"] != "new-holder" || cp["upgraded"] != int64(12345) {
		t.Errorf("checkpoint %v: overwritten by the process that lost the lease", cp)
	}
	n, err := db.Collection("items").CountDocuments(ctx, bson.D{{Key: "version", Value: int32(1)}})
	if err != nil || n != 10 {
		t.Errorf("%d items upgraded (%v); want the first batch's 10 only", n, err)
	}
}

// TestBackfillWorkersLostRangeLeaseKeepsTheNewHoldersCheckpoint: the range
// leases held when the first batch is read are taken over by a process
// that walks those ranges and records them done (here, by hand: the same
// upgrade, counted in the range's checkpoint) before the batch is written.
// The workers that lost them write nothing more there and go on with the
// other ranges: every item is upgraded once, and the total counts the new
// holder's ranges. A worker used to save its stale checkpoint of the range
// over the new holder's (done: false, its count), so the range was walked
// again and the new holder's count was lost from the total.
func TestBackfillWorkersLostRangeLeaseKeepsTheNewHoldersCheckpoint(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	const docs = 200
	insertItems(t, db, docs)
	var mu sync.Mutex
	var lost []string
	r := counterRunner(t, db, runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if e.Kind() == "backfill.rangeLeaseLost" {
			mu.Lock()
			lost = append(lost, e.String())
			mu.Unlock()
		}
	})))
	var once sync.Once
	taken := make(chan struct{})
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point != "backfill.read" {
			return
		}
		once.Do(func() {
			defer close(taken)
			walkHeldRangesByHand(ctx, t, db)
		})
		<-taken // no batch is written before the takeover
	})
	res, err := backfill.Run(ctx, r, backfill.WithRangesPerWorker(backfill.Options{Batch: 10, Workers: 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if !c.Proven || c.TotalUpgraded != docs {
		t.Errorf("proven %v, totalUpgraded %d; want proven and %d (%+v)", c.Proven, c.TotalUpgraded, docs, c)
	}
	checkItems(t, db, docs)
	mu.Lock()
	defer mu.Unlock()
	if len(lost) == 0 || !strings.Contains(lost[0], "range ") || !strings.Contains(lost[0], "goes on with the other ranges") {
		t.Errorf("events on the lost range leases: %q; want one naming the range", lost)
	}
}

// walkHeldRangesByHand takes over every range lease of items held now and
// upgrades those ranges as their new holder, recording each done.
func walkHeldRangesByHand(ctx context.Context, t *testing.T, db *mongo.Database) {
	var plan struct {
		Splits bson.A `bson:"splits"`
	}
	cps := db.Collection(backfill.Collection)
	if err := cps.FindOne(ctx, bson.D{{Key: "_id", Value: "items$plan$1"}}).Decode(&plan); err != nil {
		t.Error(err)
		return
	}
	cur, err := db.Collection(runner.DefaultLockCollection).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^backfill:items:v1:range:`}}}})
	if err != nil {
		t.Error(err)
		return
	}
	var leases []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &leases); err != nil || len(leases) == 0 {
		t.Errorf("range leases held at the first read: %v (%v)", leases, err)
		return
	}
	for _, l := range leases {
		var i int
		if _, err := fmt.Sscanf(l.ID, "backfill:items:v1:range:%d", &i); err != nil {
			t.Error(err)
			return
		}
		takeOver(ctx, t, db, l.ID)
		bounds := bson.D{}
		if i > 0 {
			bounds = append(bounds, bson.E{Key: "$gte", Value: plan.Splits[i-1]})
		}
		if i < len(plan.Splits) {
			bounds = append(bounds, bson.E{Key: "$lt", Value: plan.Splits[i]})
		}
		filter := bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}}
		if len(bounds) > 0 {
			filter = append(filter, bson.E{Key: "_id", Value: bounds})
		}
		items := db.Collection("items")
		c, err := items.Find(ctx, filter)
		if err != nil {
			t.Error(err)
			return
		}
		var below []bson.M
		if err := c.All(ctx, &below); err != nil {
			t.Error(err)
			return
		}
		for _, d := range below {
			if _, err := items.UpdateOne(ctx, bson.D{{Key: "_id", Value: d["_id"]}}, bson.D{{Key: "$set", Value: bson.D{
				{Key: "n", Value: d["n"].(int32) + 1}, {Key: "migrated", Value: true}, {Key: "version", Value: int32(1)}}}}); err != nil {
				t.Error(err)
			}
		}
		if _, err := cps.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("items$range$1$%d", i)}, {Key: "target", Value: int64(1)},
			{Key: "upgraded", Value: int64(len(below))}, {Key: "done", Value: true}}); err != nil {
			t.Error(err)
		}
	}
}

// TestBackfillServerSideLostLeaseStops: a server-side backfill whose lease
// is taken over between two of its updates stops with lease.ErrLost. The
// fence's error used to read as the server refusing an update: the result
// said "server-side upgrade ... stopped; the rest went through the client"
// and the client path was started under the lost lease.
func TestBackfillServerSideLostLeaseStops(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, handleFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, people)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "handle", Value: fmt.Sprintf("h%d", i)}}
	}
	if _, err := db.Collection("people").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.unit" {
			once.Do(func() { takeOver(ctx, t, db, "backfill:people") })
		}
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, ServerSide: true, AssumeNoWriters: true})
	if !errors.Is(err, lease.ErrLost) {
		t.Errorf("server-side backfill whose lease was taken over: %v; want lease.ErrLost", err)
	}
	if len(res.Collections) == 1 && res.Collections[0].ServerSideNote != "" {
		t.Errorf("serverSideNote %q: the lost lease read as the server's refusal", res.Collections[0].ServerSideNote)
	}
}
