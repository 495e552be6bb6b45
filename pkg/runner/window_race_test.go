package runner_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestTighteningRacesAnOldReleasesInsert: the proof
// runs before the tightening collMod; an old release's insert between the
// two (here: right after the collMod's fence) is accepted by the window
// still in force. The window used to close with a version-0 user in the
// collection; up must prove again after the collMod, find it, send the
// window again and record it open.
func TestTighteningRacesAnOldReleasesInsert(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	log := &logged{}
	r = newRunner(t, db, samples(t), runner.WithLogger(log))
	runner.SetHook(r, func(point string, v int64, i int) {
		if point == "fenced" && v == 0 { // the tightening collMod
			if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "release 0"}, {Key: "email", Value: "old@example.com"}}); err != nil {
				t.Error(err)
			}
		}
	})
	before := len(rec.Named("collMod"))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := collStatus(st, "users").Window; w != "open" {
		t.Errorf("users window = %q with a version-0 user in the collection; want open", w)
	}
	mods := rec.Named("collMod")[before:]
	if len(mods) != 2 {
		t.Fatalf("collMods = %v; want the tightening one and the window sent again", mods)
	}
	if _, err := mods[1].Lookup("validator").Document().LookupErr("$or"); err != nil {
		t.Errorf("the second collMod is not the window: %s", mods[1])
	}
	if !containsKinds(log.kinds(), "window.reopened") {
		t.Errorf("log: %v", log.kinds())
	}
}

// TestDownRacesTheReleaseItRollsBack: release 3 inserts
// a version-3 item just before the restoring collMod of down --to 2 (the
// window then in force accepts it). After a successful down one item used
// to stay at version 3, unreadable for release 2; one more downgrade pass
// after the collMod takes it down.
func TestDownRacesTheReleaseItRollsBack(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	r := newRunner(t, db, interleaveFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	items := db.Collection("items")
	current := func(title string) bson.D {
		return bson.D{{Key: "title", Value: title}, {Key: "tags", Value: bson.A{}}, {Key: "status", Value: "new"}, {Key: "rev", Value: 1}, {Key: "version", Value: 3}}
	}
	if _, err := items.InsertOne(ctx, current("before")); err != nil {
		t.Fatal(err)
	}
	fenced := 0
	runner.SetHook(r, func(point string, v int64, i int) {
		// 0003's commands: the window opened for the downgrade, then the
		// restoring collMod.
		if point == "fenced" && v == 3 {
			if fenced++; fenced == 2 {
				if _, err := items.InsertOne(ctx, current("late")); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if _, err := r.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if fenced < 2 {
		t.Fatalf("the restoring collMod was not fenced (%d fences)", fenced)
	}
	if n, err := items.CountDocuments(ctx, bson.D{{Key: "version", Value: 3}}); err != nil || n != 0 {
		t.Errorf("%d items at version 3 after down --to 2 (%v)", n, err)
	}
	if n, err := items.CountDocuments(ctx, bson.D{{Key: "version", Value: 2}}); err != nil || n != 2 {
		t.Errorf("%d items at version 2, want 2 (%v)", n, err)
	}
}
