package versioned_test

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// TestWriteBackGateHoldsForOldRelease: during a rolling deploy the new
// release's Sync write-backs, gated on its announcement, are held while a
// release that knows users only up to version 1 is live (the document is
// served upgraded, stored as it was, counted Held), and start once that
// release closed its announcement: the next read writes back.
func TestWriteBackGateHoldsForOldRelease(t *testing.T) {
	ctx := context.Background()
	db := database(t, nil)
	raw := db.Collection("users")
	ids := newIDs()
	if _, err := raw.InsertMany(ctx, mixed(ids)[:1]); err != nil {
		t.Fatal(err)
	}
	oldReg, err := version.New(fstest.MapFS{"0001_contact.yaml": migrations["0001_contact.yaml"]})
	if err != nil {
		t.Fatal(err)
	}
	old, err := release.Announce(ctx, db, oldReg, release.Options{Name: "1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	reg := registry(t)
	cur, err := release.Announce(ctx, db, reg, release.Options{Name: "3", TTL: 2 * time.Second, Renew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	users := versioned.New(raw, reg, versioned.WithWriteBack(versioned.Sync), versioned.WithWriteBackGate(cur))
	read := func() {
		t.Helper()
		var u User
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[0]}}).Decode(&u); err != nil || u.Plan != "free" {
			t.Fatalf("read: %+v, %v", u, err)
		}
	}
	read()
	if v := storedD(t, raw, ids[0]); hasKey(v, "version") {
		t.Errorf("written back while release 1 is live: %v", v)
	}
	if s := users.Stats(); s.Held != 1 || s.Written != 0 {
		t.Errorf("stats %+v, want 1 held, none written", s)
	}
	if err := old.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; !cur.WriteBackOpen("users", 3); i++ {
		if i > 600 {
			t.Fatal("the gate did not open after release 1 closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	read()
	if s := users.Stats(); s.Held != 1 || s.Written != 1 {
		t.Errorf("stats %+v, want the second read written back", s)
	}
}

func hasKey(d bson.D, k string) bool {
	for _, e := range d {
		if e.Key == k {
			return true
		}
	}
	return false
}
