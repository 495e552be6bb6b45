package runner_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// lifecycleFS is the Done-when migration of issue 30 (docs/lifecycle.md):
// 0001 a capped log, a TTL on sessions (which hold an expired backlog)
// and a view; 0002 changes each of them in place.
func lifecycleFS(withCapped bool) fstest.MapFS {
	first := `collections:
  sessions:
    indexes:
      create:
        - {keys: {lastSeen: 1}, expireAfterSeconds: 3600}
views:
  active_sessions:
    viewOn: sessions
    pipeline: [{$match: {active: true}}]
`
	second := `collections:
  sessions:
    indexes:
      change:
        - {name: lastSeen_1, expireAfterSeconds: 1800}
views:
  active_sessions:
    viewOn: sessions
    pipeline: [{$match: {active: true}}, {$project: {token: 0}}]
`
	if withCapped {
		first = "collections:\n  log:\n    options:\n      capped: {size: 1048576, max: 1000}\n" + strings.TrimPrefix(first, "collections:\n")
		second = "collections:\n  log:\n    options:\n      capped: {size: 2097152, max: 5000}\n" + strings.TrimPrefix(second, "collections:\n")
	}
	return fstest.MapFS{
		"0001_lifecycle.yaml":         {Data: []byte(first)},
		"0002_lifecycle_changes.yaml": {Data: []byte(second)},
	}
}

// insertSessions inserts n sessions last seen age ago (_id from first).
func insertSessions(t *testing.T, db *mongo.Database, first, n int, age time.Duration) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: first + i}, {Key: "lastSeen", Value: time.Now().Add(-age)}, {Key: "active", Value: i%2 == 0}, {Key: "token", Value: "t"}}
	}
	if _, err := db.Collection("sessions").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycleOnMongoDB runs the Done-when migrations on the second
// server: the capped log is refused at plan time with the server's reason
// (it has no capped collections), nothing sent; without it the TTL's
// backlog is counted by the plan and deleted first by up, the view is
// created, and 0002 lowers the TTL in place (collMod, its own smaller
// backlog deleted first) and changes the view in place.
func TestLifecycleOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_lifecycle", "no second server: the sandbox's refusals are in cmd/mongomig/testdata/script/lifecycle.txtar")
	ctx := context.Background()
	insertSessions(t, db, 0, 30, 2*time.Hour)      // past 3600s
	insertSessions(t, db, 100, 5, 45*time.Minute)  // past 1800s only
	insertSessions(t, db, 200, 10, 10*time.Minute) // fresh

	caps, err := probe.Lifecycle(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, lifecycleFS(true), runner.WithExpiryBatch(7), runner.WithExpiryPause(0))
	_, err = r.Plan(ctx, runner.Latest)
	var refused *runner.LifecycleRefusedError
	if capped := caps.Feature(probe.FeatureCapped); capped.Available {
		if err != nil {
			t.Fatalf("plan on a server with capped collections: %v", err)
		}
	} else {
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "0001_lifecycle.yaml:4:7: log: create: the server lacks capped collections: "+capped.Reason) {
			t.Fatalf("plan = %v, want the capped log refused with the server's reason", err)
		}
		if _, err := r.Up(ctx); !errors.As(err, &refused) {
			t.Fatalf("up = %v, want the refusal", err)
		}
		if names, _ := db.ListCollectionNames(ctx, bson.D{}); len(names) != 1 {
			t.Fatalf("a refused up changed the database: %v", names)
		}
	}
	if !caps.Feature(probe.FeatureTTL).Available || !caps.Feature(probe.FeatureViews).Available {
		t.Skipf("the server lacks TTL indexes or views: %+v", caps.Features)
	}

	r = newRunner(t, db, lifecycleFS(false), runner.WithExpiryBatch(7), runner.WithExpiryPause(0))
	p, err := r.Plan(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := planned(p); got != "deleteExpired:lastSeen_1(30) createIndexes:lastSeen_1 create:" {
		t.Fatalf("plan of 0001 = %s", got)
	}
	res, err := r.UpTo(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Applied[0].Commands[0].Note; n != "deleted 30 documents in 5 batches before building lastSeen_1" {
		t.Errorf("backlog deletion: %q", n)
	}
	countIs(t, db, "sessions", 15)
	if n, err := db.Collection("active_sessions").CountDocuments(ctx, bson.D{}); err != nil || n != 8 {
		t.Errorf("the view shows %d sessions (%v), want the 8 active ones", n, err)
	}

	p, err = r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if got := planned(p); got != "deleteExpired:lastSeen_1(5) collMod:lastSeen_1 collMod:" {
		t.Fatalf("plan of 0002 = %s", got)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	countIs(t, db, "sessions", 10)
	specs, err := db.Collection("sessions").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == "lastSeen_1" && (s.ExpireAfterSeconds == nil || *s.ExpireAfterSeconds != 1800) {
			t.Errorf("lastSeen_1 expires after %v, want 1800 (changed in place)", s.ExpireAfterSeconds)
		}
	}
	var doc bson.M
	if err := db.Collection("active_sessions").FindOne(ctx, bson.D{}).Decode(&doc); err != nil || doc["token"] != nil {
		t.Errorf("the changed view shows %v (%v), want no token", doc, err)
	}
}

// planned words a plan's commands as name:index(documents).
func planned(p *runner.Plan) string {
	var out []string
	for _, m := range p.Migrations {
		for _, c := range m.Commands {
			s := c.Name + ":" + c.Index
			if c.Documents != nil && c.Name == runner.CommandDeleteExpired {
				s += "(" + strconv.FormatInt(*c.Documents, 10) + ")"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

func countIs(t *testing.T, db *mongo.Database, coll string, want int64) {
	t.Helper()
	n, err := db.Collection(coll).CountDocuments(context.Background(), bson.D{})
	if err != nil || n != want {
		t.Fatalf("%s holds %d documents (%v), want %d", coll, n, err, want)
	}
}
