package runner_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// writes lists the names of the commands in cmds that change the server.
func writes(cmds []bson.Raw) []string {
	var out []string
	for _, c := range cmds {
		elems, err := c.Elements()
		if err != nil || len(elems) == 0 {
			continue
		}
		coll, _ := elems[0].Value().StringValueOK()
		switch name := elems[0].Key(); name {
		case "collMod", "create", "createIndexes", "dropIndexes", "update", "delete", "insert":
			out = append(out, name+" "+coll)
		}
	}
	return out
}

// TestDownRefusesBeforeChangingAnything: down --to 1 after a backfill
// must revert 0004, 0003 and 0002, but orders at version 4 have no
// downgrade: the whole revert is refused before the first command, and the
// dry run refuses the same way (it used to revert the
// later migrations, then refuse).
func TestDownRefusesBeforeChangingAnything(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{}); err != nil {
		t.Fatal(err)
	}
	_, planErr := r.PlanDown(ctx, 1)
	before := len(rec.All())
	_, err := r.DownTo(ctx, 1)
	var de *runner.DowngradeError
	if !errors.As(err, &de) || de.Collection != "orders" || de.Version != 4 {
		t.Fatalf("DownTo(1) = %v, want a DowngradeError for orders at 4", err)
	}
	if !errors.As(planErr, &de) {
		t.Errorf("PlanDown(1) = %v, want the same refusal", planErr)
	}
	sent := writes(rec.All()[before:])
	for _, w := range sent {
		if w != "insert mongomig_lock" && w != "delete mongomig_lock" && w != "update mongomig_lock" {
			t.Errorf("a refused down sent %s", w)
		}
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("a refused down changed the ledger: %v", v)
	}
}

// TestDownRefusesWithAnAppliedFileGone: with 0002's file deleted, reverting
// 0004 would compute the earlier validators without it (and send
// validator: {}): refused before anything changes, even with
// --allow-drift.
func TestDownRefusesWithAnAppliedFileGone(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	_ = r
	fsys := samples(t)
	delete(fsys, "0002_orders_and_blog.yaml")
	r2 := newRunner(t, db, fsys, runner.WithAllowDrift(true))
	before := len(rec.All())
	_, err := r2.DownTo(ctx, 3)
	var drift *runner.DriftError
	if !errors.As(err, &drift) {
		t.Fatalf("DownTo(3) = %v, want a DriftError naming the missing file", err)
	}
	if _, err := r2.PlanDown(ctx, 3); !errors.As(err, &drift) {
		t.Errorf("PlanDown(3) = %v, want the same refusal", err)
	}
	for _, w := range writes(rec.All()[before:]) {
		if w == "collMod orders" || w == "collMod comments" {
			t.Errorf("a refused down sent %s", w)
		}
	}
}

// TestDownDowngradesDataBeforeValidatorsAndIndexes: reverting 0003 writes
// the users back to version 0 first (guarded $set/$unset deltas, never a
// whole-document replace), then reverts the validator and swaps the
// indexes back.
func TestDownDowngradesDataBeforeValidatorsAndIndexes(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DownTo(ctx, 3); err != nil { // 0004 first: it has no users upgrade
		t.Fatal(err)
	}
	before := len(rec.All())
	if _, err := r.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	cmds := rec.All()[before:]
	firstUpdate, firstIndex, lastUpdate := -1, -1, -1
	for i, c := range cmds {
		name, _ := c.Elements()
		if len(name) == 0 {
			continue
		}
		coll, _ := name[0].Value().StringValueOK()
		switch key := name[0].Key(); {
		case key == "update" && coll == "users":
			if firstUpdate < 0 {
				firstUpdate = i
			}
			lastUpdate = i
			upd, _ := c.Lookup("updates").Array().Values()
			for _, u := range upd {
				elems, _ := u.Document().Lookup("u").Document().Elements()
				if len(elems) == 0 || elems[0].Key()[0] != '$' {
					t.Errorf("downgrade wrote a whole document: %s", u)
				}
			}
		case (key == "dropIndexes" || key == "createIndexes") && coll == "users":
			if firstIndex < 0 {
				firstIndex = i
			}
		}
	}
	if firstUpdate < 0 || firstIndex < 0 || lastUpdate > firstIndex {
		t.Fatalf("order of writes: first users update %d, last %d, first users index command %d", firstUpdate, lastUpdate, firstIndex)
	}
	n, err := db.Collection("users").CountDocuments(ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 0 {
		t.Fatalf("%d users still carry a version after down to 2 (%v)", n, err)
	}
}

// Only a backfill's own marker makes a document partway: a field of that
// name the application wrote (left alone on a current document) does not
// block down, and a real marker still does.
func TestDownPartwayMeansABackfillMarker(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DownTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	var one bson.D
	if err := users.FindOne(ctx, bson.D{}).Decode(&one); err != nil {
		t.Fatal(err)
	}
	id := one[0].Value
	set := func(v any) {
		t.Helper()
		if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: v}}}}); err != nil {
			t.Fatal(err)
		}
	}
	set(bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(1)}, {Key: "to", Value: int32(3)}, {Key: "step", Value: int32(1)}})
	if _, err := r.DownTo(ctx, 2); !errors.Is(err, runner.ErrPartway) {
		t.Fatalf("DownTo(2) with a backfill marker = %v, want ErrPartway", err)
	}
	set("the application's own value")
	if _, err := r.DownTo(ctx, 2); err != nil {
		t.Fatalf("DownTo(2) with a user's field named %s: %v", version.MarkerField, err)
	}
}
