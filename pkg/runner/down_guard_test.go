package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// copyBackFS: version 2 of users keeps email and adds contact.email (the
// application of version 2 writes only contact.email); the downgrade
// copies contact.email back to email. The downgrade reads contact but
// never changes it.
var copyBackFS = fstest.MapFS{
	"0001_users.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [email]}}
`)},
	"0002_contact.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [email, contact]}}
    upgrade:
      - copy: {email: contact.email}
    downgrade:
      - copy: {contact.email: email}
`)},
}

// TestDownGuardsWhatTheDowngradeReads interleaves application writes
// between down's read and its write (deterministically, at the
// "down.write" hook: the sandbox does not make conditional updates atomic
// under true concurrency). The application sets contact.email on one
// document, a field the downgrade reads and does not change: the guarded
// write must match nothing, the next pass re-reads the document and
// downgrades it from the new value (email "new@x"), and down says so. With
// version.DeltaOf's guard (only the fields the downgrade changes) the
// write went through and email kept the old value computed from the old
// contact.email: the old release read a stale address. A write to a field
// the downgrade neither reads nor writes (note) conflicts with nothing.
func TestDownGuardsWhatTheDowngradeReads(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	var mu sync.Mutex
	var messages []string
	r := newRunner(t, db, copyBackFS, runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if e, ok := e.(events.DocumentsDowngraded); ok {
			mu.Lock()
			messages = append(messages, e.String())
			mu.Unlock()
		}
	})))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	ids := make([]bson.ObjectID, 3)
	for i := range ids {
		ids[i] = bson.NewObjectID()
		if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: ids[i]}, {Key: "email", Value: "a@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}}); err != nil {
			t.Fatal(err)
		}
	}
	writes := 0
	runner.SetHook(r, func(point string, v int64, n int) {
		if point != "down.write" {
			return
		}
		writes++
		if writes > 1 {
			return
		}
		if v != 2 || n != len(ids) {
			t.Errorf("first down.write hook: version %d, %d writes; want 2, %d", v, n, len(ids))
		}
		for _, w := range []struct {
			id  bson.ObjectID
			set bson.D
		}{
			{ids[0], bson.D{{Key: "contact.email", Value: "new@x"}}},
			{ids[1], bson.D{{Key: "note", Value: "app"}}},
		} {
			if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: w.id}}, bson.D{{Key: "$set", Value: w.set}}); err != nil {
				t.Error(err)
			}
		}
	})
	reverted, err := r.DownTo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if writes != 2 {
		t.Errorf("down wrote %d batches; want 2 (the first pass, then the re-read document)", writes)
	}
	if len(reverted) != 1 || len(reverted[0].Documents) != 1 || reverted[0].Documents[0].Count != int64(len(ids)) {
		t.Errorf("reverted = %+v; want 3 users downgraded", reverted)
	}
	mu.Lock()
	msg := strings.Join(messages, "\n")
	mu.Unlock()
	if want := "users: 3 documents downgraded from version 2 to 0 (1 changed by another writer"; !strings.HasPrefix(msg, want) {
		t.Errorf("event %q; want it to start with %q", msg, want)
	}
	for i, want := range []string{"new@x", "a@x", "a@x"} {
		var got bson.M
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[i]}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if _, ok := got["version"]; ok || got["email"] != want {
			t.Errorf("document %d = %v; want version 0 (no field) and email %s", i, got, want)
		}
		if i == 1 && got["note"] != "app" {
			t.Errorf("document 1 = %v: the application's note was lost", got)
		}
	}
}

// TestDownStopsWhenAReadFieldKeepsChanging: a writer who changes
// contact.email before every write of down's makes every guarded write of
// that document match nothing; the pass that downgrades nothing stops down
// with an error that says so, the other documents downgraded and the
// migration still recorded (down continues with the rest when run again).
func TestDownStopsWhenAReadFieldKeepsChanging(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, copyBackFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	ids := []bson.ObjectID{bson.NewObjectID(), bson.NewObjectID()}
	for _, id := range ids {
		if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "email", Value: "a@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	runner.SetHook(r, func(point string, _ int64, _ int) {
		if point == "down.write" {
			n++
			if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: ids[0]}}, bson.D{{Key: "$set", Value: bson.D{{Key: "contact.email", Value: strings.Repeat("n", n) + "@x"}}}}); err != nil {
				t.Error(err)
			}
		}
	})
	_, err := r.DownTo(ctx, 1)
	if err == nil || !strings.Contains(err.Error(), "users: downgraded 1 documents, then: 1 documents keep changing under the downgrade") {
		t.Fatalf("DownTo(1) = %v; want the documents that keep changing reported", err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Errorf("ledger %v; want migration 2 still recorded", v)
	}
	runner.SetHook(r, nil)
	if _, err := r.DownTo(ctx, 1); err != nil {
		t.Fatalf("down again once the writer stopped: %v", err)
	}
	var got bson.M
	if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[0]}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["version"]; ok || got["email"] != "nn@x" {
		t.Errorf("document = %v; want version 0 and the writer's last address nn@x", got)
	}
}
