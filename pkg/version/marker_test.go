package version_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestWriteBackLosesToAServerSideStep replays issue 11's hole 1: the
// application reads a version-0 document; a server-side backfill step
// runs that changes nothing in it but the step marker; the application's
// write-back must then match nothing (it used to win, leaving a current
// document with a marker, so a later migration's first step was skipped).
func TestWriteBackLosesToAServerSideStep(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t) // users: 0 -> 1 -> 3 (rename, default; func, unset), see registry_test.go
	coll := sandboxtest.Database(t, "app").Collection("users")
	stored := bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}, {Key: "email", Value: "a@x"}, {Key: "status", Value: "active"}}
	if _, err := coll.InsertOne(ctx, stored); err != nil {
		t.Fatal(err)
	}
	upgraded, changed, err := reg.Upgrade("users", stored)
	if err != nil || !changed {
		t.Fatalf("upgrade: %v %v", changed, err)
	}
	// The server-side step: the default of status finds it present, so it
	// only advances the marker.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	won, err := reg.WriteBack(ctx, coll, stored, upgraded)
	if err != nil {
		t.Fatal(err)
	}
	if won {
		t.Fatal("the write-back erased the server-side step's marker")
	}
}

// TestStaleMarkerOnCurrentDocumentIsRemoved: a current document carrying a
// marker (left by the old race) is repaired, never trusted: Upgrade,
// UpgradeRaw and UpgradeM remove the marker and report a change, so the
// next write-back cleans the stored document.
func TestStaleMarkerOnCurrentDocumentIsRemoved(t *testing.T) {
	reg := newRegistry(t)
	cur := reg.Current("users")
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: int32(cur)}, {Key: version.MarkerField, Value: 1}}
	out, changed, err := reg.Upgrade("users", doc)
	if err != nil || !changed {
		t.Fatalf("Upgrade: changed %v, %v", changed, err)
	}
	for _, e := range out {
		if e.Key == version.MarkerField {
			t.Fatalf("Upgrade kept the stale marker: %v", out)
		}
	}
	raw, _ := bson.Marshal(doc)
	if _, changed, err := reg.UpgradeRaw("users", raw); err != nil || !changed {
		t.Errorf("UpgradeRaw: changed %v, %v", changed, err)
	}
	m := bson.M{"_id": 1, "version": int32(cur), version.MarkerField: 1}
	if out, changed, err := reg.UpgradeM("users", m); err != nil || !changed || out[version.MarkerField] != nil {
		t.Errorf("UpgradeM: %v changed %v, %v", out, changed, err)
	}
}
