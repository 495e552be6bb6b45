package backfill_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/runner"
)

// handleFS gives every person without a handle the handle "none", under a
// unique index on handle: the second such person collides with the first.
// (Sparse: on MongoDB the people without a handle must not collide before
// the upgrade; FerretDB ignores it and lets them be.)
var handleFS = fstest.MapFS{"0001_handle.yaml": {Data: []byte(`collections:
  people:
    validator:
      $jsonSchema:
        properties:
          handle: {bsonType: string}
    upgrade:
      - default: {handle: none}
    indexes:
      create:
        - {keys: {handle: 1}, unique: true, sparse: true}
`)}}

// Documents of insertPeople: people 6 and 13 have no handle.
const people, colliding = 20, 13

// insertPeople inserts people 0..19, each with a handle of its own but
// people 6 and 13, and returns their _ids.
func insertPeople(t *testing.T, db *mongo.Database) []bson.ObjectID {
	t.Helper()
	ids := make([]bson.ObjectID, people)
	docs := make([]any, people)
	for i := range docs {
		ids[i] = bson.NewObjectID()
		d := bson.D{{Key: "_id", Value: ids[i]}, {Key: "i", Value: int32(i)}}
		if i != 6 && i != colliding {
			d = append(d, bson.E{Key: "handle", Value: fmt.Sprintf("h%d", i)})
		}
		docs[i] = d
	}
	if _, err := db.Collection("people").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkRefused asserts that a backfill of handleFS's people upgraded all
// but person 13, whose write the unique index refused, and lists it.
func checkRefused(t *testing.T, db *mongo.Database, res *backfill.Result, ids []bson.ObjectID, upgraded int64) {
	t.Helper()
	if len(res.Collections) != 1 {
		t.Fatalf("result = %+v", res)
	}
	c := res.Collections[0]
	if c.Upgraded != upgraded || c.Conflicts != 0 || !c.Complete || c.Proven || !res.FailuresRemain() {
		t.Errorf("result = %+v; want %d upgraded, complete, not proven, failures remain", c, upgraded)
	}
	want := fmt.Sprintf(`{"$oid":"%s"}`, ids[colliding].Hex())
	if len(c.Failed) != 1 || c.Failed[0].Rule != "duplicate key" || c.Failed[0].Count != 1 ||
		len(c.Failed[0].ExampleIDs) != 1 || c.Failed[0].ExampleIDs[0] != want ||
		!strings.Contains(c.Failed[0].Message, "same key as another document in unique index handle_1") {
		t.Errorf("failures = %+v; want one duplicate key group naming handle_1 and %s", c.Failed, want)
	}
	cur, err := db.Collection("people").Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "i", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != people {
		t.Fatalf("%d people, want %d", len(docs), people)
	}
	for i, d := range docs {
		switch {
		case i == colliding && (d["version"] != nil || d["handle"] != nil):
			t.Errorf("person %d = %v; want it unchanged (its write was refused)", i, d)
		case i != colliding && d["version"] != int32(1):
			t.Errorf("person %d = %v; want version 1: one refused write stopped the others", i, d)
		}
	}
}

// TestBackfillRefusedWriteIsAFailure: the unique index refuses the write of
// person 13, in the middle of the batch. FerretDB fails the whole bulk
// write (statements after 13 skipped), so the batch is re-run one statement
// at a time: 13 is listed as a failure and every other person is upgraded.
// Runs again, and with --workers, list it again.
func TestBackfillRefusedWriteIsAFailure(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	ids := insertPeople(t, db)
	r := newRunner(t, db, handleFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: people})
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, db, res, ids, people-1)
	for _, workers := range []int{1, 2} {
		res, err := backfill.Run(ctx, r, backfill.Options{Batch: people, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		checkRefused(t, db, res, ids, 0)
	}
}

// TestBackfillRefusedWriteStopsOnLostLease: a lost lease still stops the
// backfill at once, also in FerretDB's one-by-one re-run: the lease is
// removed (as unlock --force does) when the re-run sends its first
// statement, and the next statement's fence stops it. Persons 14 to 19,
// after the refused one, stay unwritten.
func TestBackfillRefusedWriteStopsOnLostLease(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	other := sandboxtest.Connect(t, srv.URI()).Database("app")
	var once sync.Once
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "update" || e.Command.Lookup("update").StringValue() != "people" {
			return
		}
		if updates, _ := e.Command.Lookup("updates").Array().Values(); len(updates) == 1 {
			once.Do(func() {
				if _, err := other.Collection(runner.DefaultLockCollection).DeleteOne(ctx, bson.D{{Key: "_id", Value: "backfill:people"}}); err != nil {
					t.Error(err)
				}
			})
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(monitor)).Database("app")
	insertPeople(t, db)
	r := newRunner(t, db, handleFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Batch: people}); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("backfill whose lease was removed: %v; want the lease lost", err)
	}
	n, err := db.Collection("people").CountDocuments(ctx, bson.D{{Key: "i", Value: bson.D{{Key: "$gt", Value: colliding}}}, {Key: "version", Value: int32(1)}})
	if err != nil || n != 0 {
		t.Errorf("%d people after the refused one were written without the lease (%v)", n, err)
	}
}

// TestBackfillRefusedWriteMongoDB: on MongoDB an unordered bulk write
// applies every statement but the refused one and reports it in
// writeErrors, by index: one update command for the batch, none re-run.
func TestBackfillRefusedWriteMongoDB(t *testing.T) {
	sandboxtest.MongoDB(t, "mongomig_test_refused", "the writeErrors of a bulk write need MongoDB (the sandbox fails the whole bulk write: TestBackfillRefusedWriteIsAFailure)")
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	db := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database("mongomig_test_refused")
	ids := insertPeople(t, db)
	r := newRunner(t, db, handleFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	before := len(rec.Named("update"))
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: people + 1, ClientSide: true})
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, db, res, ids, people-1)
	var sent []int
	for _, cmd := range rec.Named("update")[before:] {
		if cmd.Lookup("update").StringValue() == "people" {
			sent = append(sent, len(mustArray(t, cmd.Lookup("updates"))))
		}
	}
	if len(sent) != 1 || sent[0] != people {
		t.Errorf("update commands sent to people: %v statements; want one of %d (the refused statement is reported, not re-run)", sent, people)
	}
}
