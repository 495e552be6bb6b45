package backfill_test

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// A document that appears in the range between a default unit's guarded
// $set and its advance-only update (an old application inserting it) must
// not be advanced past the default: the advance matches only the documents
// the guard excluded (found by review; the advance once matched any
// unmarked document).
func TestServerSideAdvanceNeverSkipsADefault(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	other := sandboxtest.Connect(t, srv.URI(), options.Client()).Database("app").Collection("users")
	var once sync.Once
	var insErr error
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "update" {
			return
		}
		// The advance-only update: $set of the marker alone.
		u := e.Command.Lookup("updates", "0", "u", "$set")
		if doc, ok := u.DocumentOK(); ok {
			if elems, _ := doc.Elements(); len(elems) == 1 && elems[0].Key() == "_mongomig_step" {
				once.Do(func() {
					_, insErr = other.InsertOne(context.Background(), bson.D{{Key: "_id", Value: int32(2)}, {Key: "a", Value: "x"}})
				})
			}
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(mon)).Database("app")
	fs := fstest.MapFS{"0001_status.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - default: {status: active}\n")}}
	r := newRunner(t, db, fs)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{1, 3} {
		if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "a", Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{ServerSide: true, AssumeNoWriters: true}); err != nil {
		t.Fatal(err)
	}
	if insErr != nil {
		t.Fatal(insErr)
	}
	var d bson.D
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: int32(2)}}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	t.Logf("stored: %v", d)
	var hasStatus, v1 bool
	for _, e := range d {
		hasStatus = hasStatus || e.Key == "status"
		v1 = v1 || e.Key == "version" && e.Value == int32(1)
	}
	if v1 && !hasStatus {
		t.Errorf("document inserted between the default's update and its advance is at version 1 without status: %v", d)
	}
}
