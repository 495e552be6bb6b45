package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestUpReassertsWhatDiffers: with every sample migration applied, an
// index 0002 creates dropped by hand and one no migration names created by
// hand: Plan shows, first, the createIndexes that puts the declared one
// back and nothing for the other; Up sends exactly that (pinned with the
// command recorder), and the hand-made index stays.
func TestUpReassertsWhatDiffers(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	orders := db.Collection("orders")
	if err := orders.Indexes().DropOne(ctx, "status_1"); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "orders"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "byHand", Value: 1}}}, {Key: "name", Value: "byHand_1"}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reassert == nil || len(p.Reassert.Commands) != 1 || p.Reassert.Commands[0].Name != "createIndexes" || p.Reassert.Commands[0].Index != "status_1" {
		t.Fatalf("plan's reassert = %+v, want the createIndexes of status_1 only", p.Reassert)
	}
	if len(p.Reassert.Differences) != 1 || p.Reassert.Differences[0].Message != "orders: index status_1 does not exist; 0002 creates it" {
		t.Errorf("plan's differences = %+v", p.Reassert.Differences)
	}
	rec.Reset()
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reasserted == nil || len(res.Reasserted.Commands) != 1 {
		t.Fatalf("up reasserted %+v", res.Reasserted)
	}
	sent := rec.Named("createIndexes")
	if len(sent) != 1 || sent[0].Lookup("createIndexes").StringValue() != "orders" {
		t.Fatalf("createIndexes sent: %v", sent)
	}
	if n := len(rec.Named("dropIndexes")) + len(rec.Named("collMod")); n != 0 {
		t.Errorf("%d dropIndexes/collMod sent; the hand-made index and the settings are not up's", n)
	}
	names := indexNames(t, db.Collection("orders"))
	if !names["status_1"] || !names["byHand_1"] {
		t.Errorf("orders indexes after up: %v, want status_1 back and byHand_1 kept", names)
	}
	// Nothing differs any more: the next up sends nothing, and says nothing.
	rec.Reset()
	if res, err := r.Up(ctx); err != nil || res.Reasserted != nil || len(rec.Named("createIndexes")) != 0 {
		t.Errorf("second up: %+v, %v, %d createIndexes", res, err, len(rec.Named("createIndexes")))
	}
}

// TestTighteningHeldWhileOldReleaseLive: the users backfill proved, a live
// release whose files stop at 0002 (users at version 0) keeps up from
// closing the window: Plan and Up report it held, naming the release, and
// send no collMod; once the release closed its announcement, up closes it.
func TestTighteningHeldWhileOldReleaseLive(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	files := fixtures.Samples(t)
	for name := range files {
		if name >= "0003" {
			delete(files, name)
		}
	}
	reg, err := version.New(files, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	a, err := release.Announce(ctx, db, reg, release.Options{Name: "2.0", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tighten) != 0 || len(p.HeldWindows) != 1 || p.HeldWindows[0].Collection != "users" || p.HeldWindows[0].Releases[0].Name != "2.0" {
		t.Fatalf("plan: tighten %v, held %+v; want users held for 2.0", p.Tighten, p.HeldWindows)
	}
	st, err := r.StatusOf(ctx, runner.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Releases) != 1 || collStatus(st, "users").NextUp == "" || !strings.Contains(collStatus(st, "users").NextUp, "open while release 2.0") {
		t.Errorf("status: releases %+v, users next up %q", st.Releases, collStatus(st, "users").NextUp)
	}
	rec.Reset()
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tightened == nil || len(res.Tightened.Commands) != 0 || len(res.Tightened.Held) != 1 {
		t.Fatalf("up with 2.0 live: %+v", res.Tightened)
	}
	if n := len(rec.Named("collMod")); n != 0 {
		t.Errorf("%d collMod sent while 2.0 is live", n)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = r.Up(ctx)
	if err != nil || res.Tightened == nil || len(res.Tightened.Commands) != 1 || len(res.Tightened.Held) != 0 {
		t.Fatalf("up after 2.0 closed: %+v, %v", res.Tightened, err)
	}
}

// TestUpReassertsWhatDiffersMongoDB: on a server that keeps validators,
// levels and actions (MONGOMIG_TEST_URI), an up after up finds nothing to
// put back (no validator or setting reads as differing), and a declared
// index dropped by hand comes back, alone.
func TestUpReassertsWhatDiffersMongoDB(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(t, "mongomig_test_reassert_up", "TestUpReassertsWhatDiffers runs on the sandbox")
	// The second test server (FerretDB 2) does not enforce enum or
	// additionalProperties:
	// those validators stay client-side, the others are sent.
	r := fixtures.NewRunner(t, db, fixtures.Samples(t), runner.WithClientSideValidators("orders", "users"))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "posts"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("validator").Type == 0 {
		t.Fatalf("posts holds no validator on the server (%v): the comparison is not exercised", err)
	}
	if res, err := r.Up(ctx); err != nil || res.Reasserted != nil {
		t.Fatalf("second up: reasserted %+v, %v; want nothing", res.Reasserted, err)
	}
	if err := db.Collection("orders").Indexes().DropOne(ctx, "status_1"); err != nil {
		t.Fatal(err)
	}
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reasserted == nil || len(res.Reasserted.Commands) != 1 || res.Reasserted.Commands[0].Index != "status_1" {
		t.Fatalf("up after the drop: reasserted %+v", res.Reasserted)
	}
	if !indexNames(t, db.Collection("orders"))["status_1"] {
		t.Error("status_1 not back")
	}
}
