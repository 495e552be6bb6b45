package runner_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
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
	if w := collStatus(st, "posts").Window; w != "" {
		t.Errorf("posts (validator of 0002, before any posts upgrade) window = %q, want none", w)
	}
	if _, err := r.Backfill(ctx, runner.BackfillOptions{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil || len(p.Tighten) != 1 || p.Tighten[0].Collection != "users" {
		t.Fatalf("plan after backfill: %+v %v", p, err)
	}
	before := len(rec.named("collMod"))
	applied, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].Direction != "tighten" {
		t.Fatalf("up after backfill = %+v", applied)
	}
	mods := rec.named("collMod")[before:]
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
	if err != nil || len(again) != 0 {
		t.Errorf("third up: %+v %v", again, err)
	}
}

// TestValidatorWindowOnMongoDB checks what the window means on a real
// server: inside it an old document may be written, a current one must be
// valid; after tightening, old ones are refused.
func TestValidatorWindowOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_window", "the window's enforcement needs a server with validators (the exact commands are checked by TestValidatorWindowTightensAfterBackfill)")
	ctx := context.Background()
	r := newRunner(t, db, samples(t))
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	old := bson.D{{Key: "name", Value: "Old"}, {Key: "email", Value: "o@x"}, {Key: "version", Value: 1}}
	if _, err := users.InsertOne(ctx, old); err != nil {
		t.Errorf("window refused an old-version document: %v", err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "New"}, {Key: "version", Value: 3}}); !isValidationFailure(err) {
		t.Errorf("window accepted an invalid current document: %v", err)
	}
	if _, err := r.Backfill(ctx, runner.BackfillOptions{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := users.InsertOne(ctx, bson.D{{Key: "name", Value: "Old2"}, {Key: "email", Value: "o@x"}, {Key: "version", Value: 1}}); !isValidationFailure(err) {
		t.Errorf("tightened validator accepted an old document: %v", err)
	}
}
