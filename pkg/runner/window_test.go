package runner_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func collStatus(st *runner.Status, name string) runner.CollectionStatus {
	for _, c := range st.Collections {
		if c.Name == name {
			return c
		}
	}
	return runner.CollectionStatus{}
}

// TestValidatorWindowTightensAfterBackfill: up sends the windowed
// validator; once a backfill proved no older document remains, the next up
// sends the plain schema, once.
func TestValidatorWindowTightensAfterBackfill(t *testing.T) {
	ctx := context.Background()
	_, rec, r := sampleApplied(t)
	st, _ := r.Status(ctx)
	if w := collStatus(st, "users").Window; w != "open" {
		t.Errorf("users window after up = %q", w)
	}
	// posts: 0004 upgrades them but declares no validator: both versions
	// are checked against 0002's schema, each in its own branch.
	if p := collStatus(st, "posts"); p.Window != "open" || len(p.WindowBranches) != 2 ||
		p.WindowBranches[0] != (runner.WindowBranch{Version: 4, SchemaFrom: 2}) || p.WindowBranches[1] != (runner.WindowBranch{Version: 0, SchemaFrom: 2}) {
		t.Errorf("posts window = %q %+v, want open with v4 and v0 both checked by 0002", p.Window, p.WindowBranches)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil || len(p.Tighten) != 1 || p.Tighten[0].Collection != "users" {
		t.Fatalf("plan after backfill: %+v %v", p, err)
	}
	before := len(rec.Named("collMod"))
	applied, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Applied) != 0 || applied.Tightened == nil {
		t.Fatalf("up after backfill = %+v", applied)
	}
	mods := rec.Named("collMod")[before:]
	if len(mods) != 1 || mods[0].Lookup("collMod").StringValue() != "users" {
		t.Fatalf("tightening commands = %v", mods)
	}
	if _, err := mods[0].Lookup("validator").Document().LookupErr("$jsonSchema"); err != nil {
		t.Errorf("tightened validator is not the plain schema: %s", mods[0])
	}
	st, _ = r.Status(ctx)
	if w := collStatus(st, "users").Window; w != "closed" {
		t.Errorf("users window after tightening = %q", w)
	}
	again, err := r.Up(ctx)
	if err != nil || len(again.Applied) != 0 || again.Tightened != nil {
		t.Errorf("third up: %+v %v", again, err)
	}
}

// TestValidatorWindowOnMongoDB checks what the window means on a real
// server: inside it each version is checked against its own schema (a
// version-0 document against 0001's, so one without email is
// refused), a version no migration knows is refused, a current
// one must be valid; after tightening, old ones are refused.
func TestValidatorWindowOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_window", "the window's enforcement needs a server with validators (the exact commands are checked by TestUpFromEmptyThenNothingPending and TestValidatorWindowTightensAfterBackfill)")
	ctx := context.Background()
	fsys, refused := fixtures.EnforceableSamples(t, db) // only users is written to
	r := newRunner(t, db, fsys, runner.WithClientSideValidators(slices.Sorted(maps.Keys(refused))...))
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "Old"}, {Key: "email", Value: "o@x"}}); err != nil {
		t.Errorf("window refused a valid version-0 document: %v", err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "Old, no email"}}); !isValidationFailure(err) {
		t.Errorf("window accepted a version-0 document that breaks 0001's schema: %v", err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "Odd"}, {Key: "email", Value: "o@x"}, {Key: "version", Value: 1}}); !isValidationFailure(err) {
		t.Errorf("window accepted version 1, which is no document version of users: %v", err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "New"}, {Key: "version", Value: 3}}); !isValidationFailure(err) {
		t.Errorf("window accepted an invalid current document: %v", err)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "Old2"}, {Key: "email", Value: "o@x"}}); !isValidationFailure(err) {
		t.Errorf("tightened validator accepted an old document: %v", err)
	}
}

// TestWindowNotTightenedOnStaleProof: a version-0 document written after
// the backfill proved none remained (an old release still running) keeps
// the window open: up re-proves before closing it.
func TestWindowNotTightenedOnStaleProof(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "Late"}, {Key: "email", Value: "late@x"}}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil || len(p.Tighten) != 0 {
		t.Fatalf("plan would tighten on a stale proof: %+v %v", p.Tighten, err)
	}
	before := len(rec.Named("collMod"))
	if applied, err := r.Up(ctx); err != nil || len(applied.Applied) != 0 || applied.Tightened != nil {
		t.Fatalf("up = %+v, %v", applied, err)
	}
	if mods := rec.Named("collMod")[before:]; len(mods) != 0 {
		t.Fatalf("up tightened on a stale proof: %v", mods)
	}
	// Once the late document is upgraded too, the window closes.
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if applied, err := r.Up(ctx); err != nil || applied.Tightened == nil || len(applied.Applied) != 0 {
		t.Fatalf("up after the second backfill = %+v, %v", applied, err)
	}
}

// TestWindowReopensAfterDown: after up, backfill, up (closed), down --to 2
// brings users back to version 0; the next up sends the window again, not
// the plain schema, and does not close it before a new backfill.
func TestWindowReopensAfterDown(t *testing.T) {
	ctx := context.Background()
	_, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if applied, err := r.Up(ctx); err != nil || applied.Tightened == nil {
		t.Fatalf("tightening up = %+v, %v", applied, err)
	}
	if _, err := r.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	before := len(rec.Named("collMod"))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var users bson.Raw
	for _, m := range rec.Named("collMod")[before:] {
		if m.Lookup("collMod").StringValue() == "users" {
			users = m
		}
	}
	if users == nil {
		t.Fatal("up after down sent no collMod for users")
	}
	if _, err := users.Lookup("validator").Document().LookupErr("$or"); err != nil {
		t.Fatalf("up after down sent the plain schema, though users are back at version 0: %s", users)
	}
	st, _ := r.Status(ctx)
	if w := collStatus(st, "users").Window; w != "open" {
		t.Errorf("users window after down and up = %q, want open", w)
	}
}
