package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestDownRevertsLifecycleMongoDB runs lifecycleFS's two migrations on the
// second server, then down twice. Down of 0002 changes the view back to
// 0001's pipeline (collMod viewOn and pipeline) and the TTL back to 3600
// seconds in place (collMod index: src/mongo/db/catalog/coll_mod.cpp, the
// index option), and says the documents deleted under 1800 do not come
// back; its expiry progress is cleared. Down of 0001 drops the view and
// the TTL index (it created them), and says the backlog up deleted is gone.
func TestDownRevertsLifecycleMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_lifecycle_down", "no second server: the sandbox refuses views and TTL indexes at plan time (lifecycle.txtar)")
	ctx := context.Background()
	caps, err := probe.Lifecycle(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{probe.FeatureTTLModify, probe.FeatureViewsModify} {
		if !caps.Feature(f).Available {
			t.Skipf("the server lacks %s: %s", f, caps.Feature(f).Reason)
		}
	}
	insertSessions(t, db, 0, 4, 2*time.Hour)
	insertSessions(t, db, 100, 6, 10*time.Minute)
	r := newRunner(t, db, lifecycleFS(false), runner.WithExpiryPause(0))
	// One migration a run: the plan of 0002 reads the server's indexes,
	// which do not hold 0001's TTL index before 0001 is applied.
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if n := expiryProgress(t, db); n == 0 {
		t.Fatal("up stored no expiry progress")
	}

	p, err := r.PlanDown(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range p.Migrations[0].Commands {
		texts = append(texts, string(c.Text))
	}
	want := []string{
		`{"collMod":"active_sessions","viewOn":"sessions","pipeline":[{"$match":{"active":true}}]}`,
		`{"collMod":"sessions","index":{"name":"lastSeen_1","expireAfterSeconds":3600}}`,
	}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Fatalf("down plan of 0002:\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	if !hasNote(p.Notes, "the documents deleted as expired under lastSeen_1's expireAfterSeconds 1800 do not come back") {
		t.Errorf("plan notes %q", p.Notes)
	}
	rev, err := r.Down(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(rev[0].NotReverted, "expireAfterSeconds 1800 do not come back") {
		t.Errorf("down of 0002 says %q", rev[0].NotReverted)
	}
	if ttl := indexTTL(t, db, "sessions", "lastSeen_1"); ttl != 3600 {
		t.Errorf("lastSeen_1 expireAfterSeconds after down = %d, want 3600", ttl)
	}
	if pl := viewPipeline(t, db, "active_sessions"); pl != `[{"$match": {"active": true}}]` {
		t.Errorf("view pipeline after down = %s", pl)
	}

	rev, err = r.Down(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(rev[0].NotReverted, "the documents deleted as expired by lastSeen_1 (up's backlog deletion, and the TTL monitor since) do not come back") {
		t.Errorf("down of 0001 says %q", rev[0].NotReverted)
	}
	if names, _ := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "active_sessions"}}); len(names) != 0 {
		t.Errorf("the view 0001 created is still there")
	}
	if ttl := indexTTL(t, db, "sessions", "lastSeen_1"); ttl != -1 {
		t.Errorf("the TTL index 0001 created is still there")
	}
	if n := expiryProgress(t, db); n != 0 {
		t.Errorf("%d expiry progress documents left after reverting every migration", n)
	}
	countIs(t, db, "sessions", 6) // the expired 4 stay deleted
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// expiryProgress counts the stored backlog deletions (internal/state's
// $expire$ documents in mongomig_backfill).
func expiryProgress(t *testing.T, db *mongo.Database) int64 {
	t.Helper()
	n, err := db.Collection("mongomig_backfill").CountDocuments(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^\$expire\$`}}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// indexTTL is the index's expireAfterSeconds (-1: no such index, 0: none).
func indexTTL(t *testing.T, db *mongo.Database, coll, name string) int64 {
	t.Helper()
	specs, err := db.Collection(coll).Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == name {
			if s.ExpireAfterSeconds == nil {
				return 0
			}
			return int64(*s.ExpireAfterSeconds)
		}
	}
	return -1
}

// viewPipeline is the view's pipeline as listCollections shows it.
func viewPipeline(t *testing.T, db *mongo.Database, view string) string {
	t.Helper()
	specs, err := db.ListCollectionSpecifications(context.Background(), bson.D{{Key: "name", Value: view}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections %s: %v %v", view, specs, err)
	}
	return specs[0].Options.Lookup("pipeline").String()
}
