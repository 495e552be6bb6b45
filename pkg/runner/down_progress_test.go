package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// downEvents records the events of down's document pass.
type downEvents struct {
	mu       sync.Mutex
	progress []events.DowngradeProgress
	notices  []events.DownGuardScans
	order    []string
}

func (d *downEvents) Log(e events.Entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch e := e.(type) {
	case events.DowngradeProgress:
		d.progress = append(d.progress, e)
	case events.DownGuardScans:
		d.notices = append(d.notices, e)
	default:
		return
	}
	d.order = append(d.order, e.Kind())
}

// insertContacts inserts n users at version 2 of copyBackFS.
func insertContacts(t *testing.T, db *mongo.Database, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "email", Value: "old@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}}
	}
	if _, err := db.Collection("users").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// countUsers counts users at version 2 and without a version (0).
func countUsers(t *testing.T, db *mongo.Database) (v2, v0 int64) {
	t.Helper()
	ctx := context.Background()
	v2, err := db.Collection("users").CountDocuments(ctx, bson.D{{Key: "version", Value: 2}})
	if err != nil {
		t.Fatal(err)
	}
	v0, err = db.Collection("users").CountDocuments(ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}})
	if err != nil {
		t.Fatal(err)
	}
	return v2, v0
}

// TestDownInterruptedInDocumentPass (trial finding 3): cancelling the
// context (SIGINT) while down rewrites documents stops it after the batch
// in flight, and the InterruptedError says how many documents of which
// collection are already at the earlier version while the migration stays
// recorded (the message used to say only "0 of 1 migrations reverted").
// The next down continues with the documents left. Progress events
// (finding 5) count every batch, and on the sandbox the guard-scan notice
// comes once, before the first of them.
func TestDownInterruptedInDocumentPass(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	var ev downEvents
	r := newRunner(t, db, copyBackFS, runner.WithLogger(&ev))
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	insertContacts(t, db, 120) // batches of 50: 50, 50, 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	runner.SetHook(r, func(point string, _ int64, _ int) {
		if point == "down.write" {
			if batches++; batches == 2 {
				cancel() // while the second batch is about to be written
			}
		}
	})
	_, err := r.DownTo(ctx, 1)
	var ie *runner.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("DownTo = %v; want an InterruptedError", err)
	}
	want := runner.DowngradeCount{DocumentChange: runner.DocumentChange{Collection: "users", From: 2, To: 0, Count: 100}, Left: 20}
	if d := ie.Downgraded; d == nil || d.File != "0002_contact.yaml" || d.Version != 2 || len(d.Collections) != 1 || d.Collections[0] != want {
		t.Fatalf("Downgraded = %+v; want 0002_contact.yaml with %+v", ie.Downgraded, want)
	}
	for _, s := range []string{
		"interrupted: 0 of 1 migrations reverted",
		"0002_contact.yaml stopped while downgrading its documents and stays recorded as applied, but 100 users documents are already downgraded from version 2 to 0 (20 left at 2)",
		"running down again (to the same target) continues",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q: %v", s, err)
		}
	}
	if v2, v0 := countUsers(t, db); v2 != 20 || v0 != 100 {
		t.Errorf("users: %d at version 2, %d at 0; want 20 and 100 (the batch in flight completes)", v2, v0)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Errorf("ledger %v; want migration 2 still recorded", v)
	}
	ev.mu.Lock()
	if len(ev.progress) != 2 || ev.progress[0].Count != 50 || ev.progress[1].Count != 100 || ev.progress[1].Total != 120 {
		t.Errorf("progress events %+v; want counts 50 and 100 of 120", ev.progress)
	} else if msg := ev.progress[1].String(); !strings.HasPrefix(msg, "users: 100 of 120 documents downgraded from version 2 to 0, ") || !strings.Contains(msg, "20 left, ETA ") {
		t.Errorf("progress message %q", msg)
	}
	if len(ev.notices) != 1 || ev.order[0] != "down.guardScans" || ev.notices[0].Total != 120 || !strings.Contains(ev.notices[0].String(), "each write scans its collection") {
		t.Errorf("events %v, notices %+v; want one guard-scan notice for 120 documents, first", ev.order, ev.notices)
	}
	ev.progress, ev.notices, ev.order = nil, nil, nil
	ev.mu.Unlock()

	runner.SetHook(r, nil)
	reverted, err := r.DownTo(context.Background(), 1)
	if err != nil {
		t.Fatalf("down again: %v", err)
	}
	if len(reverted) != 1 || len(reverted[0].Documents) != 1 || reverted[0].Documents[0].Count != 20 {
		t.Errorf("second down reverted %+v; want the 20 users left downgraded", reverted)
	}
	if v2, v0 := countUsers(t, db); v2 != 0 || v0 != 120 {
		t.Errorf("users after the second down: %d at version 2, %d at 0; want 0 and 120", v2, v0)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1) {
		t.Errorf("ledger %v; want [1]", v)
	}
	var got bson.M
	if err := db.Collection("users").FindOne(context.Background(), bson.D{{Key: "_id", Value: 0}}).Decode(&got); err != nil || got["email"] != "a@x" {
		t.Errorf("user 0 = %v, %v; want email a@x copied back from contact.email", got, err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if n := len(ev.progress); n != 1 || ev.progress[0].Count != 20 || ev.progress[0].Total != 20 {
		t.Errorf("progress of the second down %+v; want one event, 20 of 20", ev.progress)
	}
}

// TestDownProgressOnMongoDB: on MongoDB a guarded write finds its document
// through the _id index, so down sends no guard-scan notice; its progress
// events count every batch.
func TestDownProgressOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_down_progress", "no real MongoDB to show that down gives no guard-scan notice there (the sandbox's notice is checked by TestDownInterruptedInDocumentPass)")
	var ev downEvents
	r := newRunner(t, db, copyBackFS, runner.WithLogger(&ev))
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	insertContacts(t, db, 120)
	if _, err := r.DownTo(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if v2, v0 := countUsers(t, db); v2 != 0 || v0 != 120 {
		t.Errorf("users: %d at version 2, %d at 0; want 0 and 120", v2, v0)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.notices) != 0 {
		t.Errorf("guard-scan notice on MongoDB: %+v", ev.notices)
	}
	if n := len(ev.progress); n != 3 || ev.progress[n-1].Count != 120 || ev.progress[n-1].Total != 120 {
		t.Errorf("progress events %+v; want 3 (batches of 50), the last 120 of 120", ev.progress)
	}
}

// TestDownInterruptedAfterDocumentPass: a signal after the documents were
// downgraded, between the commands that revert the validator and the
// index, names both: the commands done and not done, and the documents
// already at the earlier version while the migration stays recorded. The
// next down finds no document to downgrade and finishes the commands.
func TestDownInterruptedAfterDocumentPass(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_users.yaml": copyBackFS["0001_users.yaml"],
		"0002_contact.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [email, contact]}}
    upgrade:
      - copy: {email: contact.email}
    downgrade:
      - copy: {contact.email: email}
    indexes:
      create:
        - {keys: {contact.email: 1}}
`)},
	}
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, fsys)
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	insertContacts(t, db, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wrote := false
	runner.SetHook(r, func(point string, _ int64, _ int) {
		switch point {
		case "down.write":
			wrote = true
		case "command":
			if wrote {
				cancel() // after the first command that follows the documents
			}
		}
	})
	_, err := r.DownTo(ctx, 1)
	var ie *runner.InterruptedError
	if !errors.As(err, &ie) || ie.Partial == nil || len(ie.Partial.Done) != 1 || len(ie.Partial.NotDone) != 0 {
		t.Fatalf("DownTo = %v (%+v); want an InterruptedError between the two commands that follow the documents", err, ie)
	}
	if d := ie.Downgraded; d == nil || !d.Finished || len(d.Collections) != 1 || d.Collections[0].Count != 10 || d.Collections[0].Left != 0 {
		t.Fatalf("Downgraded = %+v; want the 10 users, pass finished", ie.Downgraded)
	}
	for _, s := range []string{
		"0002_contact.yaml stopped between commands (1 done, 1 not done) and is not recorded",
		"0002_contact.yaml stopped after downgrading its documents and stays recorded as applied, but 10 users documents are already downgraded from version 2 to 0 (0 left at 2)",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q: %v", s, err)
		}
	}
	runner.SetHook(r, nil)
	reverted, err := r.DownTo(context.Background(), 1)
	if err != nil || len(reverted) != 1 || len(reverted[0].Documents) != 0 {
		t.Fatalf("down again = %+v, %v; want 0002 reverted with no document left to downgrade", reverted, err)
	}
	if v2, v0 := countUsers(t, db); v2 != 0 || v0 != 10 {
		t.Errorf("users: %d at version 2, %d at 0; want 0 and 10", v2, v0)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1) {
		t.Errorf("ledger %v; want [1]", v)
	}
}
