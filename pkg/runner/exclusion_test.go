package runner_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestDownWaitsForARunningBackfill: a down that reverts a collection's
// upgrades and a backfill of that collection exclude each other. A
// backfill of users has read a batch; a down --to 2 (reverting 0003, which
// raises users to version 3) started then waits for the backfill's lease
// and gives up after its lock wait, reverting nothing; the backfill writes
// its batch and finishes; a down run afterwards reverts everything and
// leaves no document above the applied version and no checkpoint. Without
// the exclusion the down ran to completion inside the backfill (nothing
// was at version 3 yet), and the backfill then wrote its batch: documents
// at version 3 under a ledger at 2, and the checkpoint back, proven.
func TestDownWaitsForARunningBackfill(t *testing.T) {
	for _, path := range []struct {
		name string
		opts backfill.Options
	}{
		{"client path", backfill.Options{Collections: []string{"users"}, Batch: 10, ClientSide: true}},
		{"server-side path", backfill.Options{Collections: []string{"users"}, Batch: 10, ServerSide: true, AssumeNoWriters: true}},
	} {
		t.Run(path.name, func(t *testing.T) {
			ctx := context.Background()
			db, _, r := sampleApplied(t)
			other := newRunner(t, db, samples(t), runner.WithLockWait(300*time.Millisecond))
			var downErr error
			ran := false
			runner.SetHook(r, func(point string, _ int64, _ int) {
				if ran || (point != "backfill.read" && point != "backfill.unit") {
					return
				}
				ran = true
				_, downErr = other.DownTo(ctx, 2)
			})
			res, err := backfill.Run(ctx, r, path.opts)
			runner.SetHook(r, nil)
			if err != nil || !ran {
				t.Fatalf("backfill: %+v %v (hook ran: %v)", res, err, ran)
			}
			var busy *runner.BackfillRunningError
			if !errors.As(downErr, &busy) || busy.Collection != "users" {
				t.Fatalf("down during the backfill = %v; want a BackfillRunningError for users", downErr)
			}
			if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
				t.Fatalf("ledger after the refused down = %v; want nothing reverted", v)
			}
			if n := countAbove(t, db, "users", 3); n != 0 {
				t.Errorf("%d users above version 3", n)
			}
			if _, err := r.DownTo(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
				t.Fatalf("ledger after down = %v", v)
			}
			if n := countAbove(t, db, "users", 0); n != 0 {
				t.Errorf("%d users above version 0 with 0003 reverted: each is a TooNewError for release 2", n)
			}
			if cp, err := state.New(db).Read(ctx, "users"); err != nil || cp != nil {
				t.Errorf("users checkpoint after down = %+v, %v; want none", cp, err)
			}
		})
	}
}

// TestBackfillStopsWhenItsTargetIsReverted: a backfill re-reads the
// applied version before every checkpoint save; when the migration that
// raises its target is no longer recorded (here removed from the ledger
// by hand, as an older mongomig's down would, without the backfill's
// lease), it stops with a NotAppliedError and records no proof.
func TestBackfillStopsWhenItsTargetIsReverted(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	runner.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 1 {
			if _, err := db.Collection(runner.DefaultLedgerCollection).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 3}}}}); err != nil {
				t.Error(err)
			}
		}
	})
	defer runner.SetHook(r, nil)
	_, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: 5, ClientSide: true})
	var na *backfill.NotAppliedError
	if !errors.As(err, &na) || !na.During || na.Collection != "users" || na.Applied != 2 {
		t.Fatalf("backfill after its target was reverted = %v; want a NotAppliedError during the run", err)
	}
	if cp, err := state.New(db).Read(ctx, "users"); err != nil || (cp != nil && cp.Proven) {
		t.Errorf("users checkpoint = %+v, %v; want no proof", cp, err)
	}
}

// TestBackfillProofDoesNotOverwriteAReopenedWindow: a backfill that began
// while users' window was closed (tightened) walks again for a late
// version-0 document; meanwhile up applies a validator-only migration,
// finds that old document, sends the window and clears the flags. The
// backfill's saves write progress only, and its proof is conditional on
// the generation it read when it began: the checkpoint stays untightened
// and unproven, status says the window is open, and the next backfill and
// up close it. With whole-document saves
// the backfill wrote tightened: true back: status said closed while the
// server held the window, and no later up tightened it.
func TestBackfillProofDoesNotOverwriteAReopenedWindow(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if applied, err := r.Up(ctx); err != nil || applied.Tightened == nil || len(applied.Applied) != 0 {
		t.Fatalf("tightening up = %+v, %v", applied, err)
	}
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "Late"}, {Key: "email", Value: "late@x.org"}}); err != nil {
		t.Fatal(err)
	}
	withFive := samples(t)
	withFive["0005_users_phone.yaml"] = &fstest.MapFile{Data: []byte(`collections:
  users:
    validator:
      $jsonSchema:
        bsonType: object
        required: [name, contact, status]
        properties:
          name: {bsonType: string, minLength: 1}
          contact: {bsonType: object, properties: {phone: {bsonType: string}}}
`)}
	five := newRunner(t, db, withFive)
	var upErr error
	ran := false
	runner.SetHook(r, func(point string, _ int64, _ int) {
		if point == "backfill.read" && !ran {
			ran = true
			_, upErr = five.Up(ctx)
		}
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ClientSide: true})
	runner.SetHook(r, nil)
	if err != nil || upErr != nil || !ran {
		t.Fatalf("backfill %+v %v; up during it: %v (ran %v)", res, err, upErr, ran)
	}
	if c := res.Collections[0]; c.Proven || c.ProofNote == "" {
		t.Errorf("backfill result proven=%v note=%q; want no proof, with a note saying the window was reopened", c.Proven, c.ProofNote)
	}
	cp, err := state.New(db).Read(ctx, "users")
	if err != nil || cp == nil || cp.Tightened || cp.Proven {
		t.Fatalf("users checkpoint = %+v, %v; want neither tightened nor proven", cp, err)
	}
	st, err := five.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := collStatus(st, "users").Window; w != "open" {
		t.Errorf("users window = %q; want open (the server holds the $or window)", w)
	}
	if _, err := backfill.Run(ctx, five, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if applied, err := five.Up(ctx); err != nil || applied.Tightened == nil || len(applied.Applied) != 0 {
		t.Fatalf("up after a new backfill = %+v, %v; want the window closed", applied, err)
	}
}

// countAbove counts the documents of coll whose version is above v.
func countAbove(t *testing.T, db *mongo.Database, coll string, v int64) int64 {
	t.Helper()
	n, err := db.Collection(coll).CountDocuments(context.Background(), bson.D{{Key: "version", Value: bson.D{{Key: "$gt", Value: v}}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStatusCheckFailsOnDocumentsAboveTheAppliedVersion: a document above
// a collection's current version (a release newer than the ledger wrote
// it, or a backfill past a down) makes status not clean, with or without
// counts. Here the files end at 0003 (users at version 3) and a release
// that knows a 0005 wrote a user at version 5.
func TestStatusCheckFailsOnDocumentsAboveTheAppliedVersion(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := samples(t)
	delete(fsys, "0004_order_currency_and_tags.yaml")
	r := newRunner(t, db, fsys)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []runner.StatusOptions{{Check: true}, {Counts: true}} {
		st, err := r.StatusOf(ctx, opts)
		if err != nil || !st.Clean() {
			t.Fatalf("status %+v before: clean=%v %v", opts, st != nil && st.Clean(), err)
		}
	}
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "New"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "n@x.org"}}}, {Key: "status", Value: "active"}, {Key: "version", Value: int32(5)}}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []runner.StatusOptions{{Check: true}, {Counts: true}} {
		st, err := r.StatusOf(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c := collStatus(st, "users"); st.Clean() || c.AboveCurrent != 1 || c.CurrentVersion != 3 {
			t.Errorf("status %+v: clean=%v, users above %d: %d; want not clean, 1", opts, st.Clean(), c.CurrentVersion, c.AboveCurrent)
		}
	}
}
