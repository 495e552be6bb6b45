package backfill_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/version"
)

func TestBackfillSampleData(t *testing.T) {
	ctx := context.Background()
	db, rec, r := sampleApplied(t)
	before := len(rec.Named("update"))
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 500, ClientSide: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"comments": 36, "orders": 60, "posts": 12, "users": 40}
	for _, c := range res.Collections {
		if c.Upgraded != want[c.Collection] || !c.Complete || !c.Proven || c.Conflicts != 0 || len(c.Failed) != 0 {
			t.Errorf("%s: %+v", c.Collection, c)
		}
	}
	// FerretDB caps batches at 50: every update command carries at most 50
	// statements, and orders (60) took two batches, one read (find, then
	// getMore on the same cursor) and one write each.
	for _, cmd := range rec.Named("update")[before:] {
		if n := len(mustArray(t, cmd.Lookup("updates"))); n > backfill.FerretDBMaxBatch {
			t.Errorf("an update command carried %d statements", n)
		}
	}
	for _, c := range res.Collections {
		if c.Collection == "orders" && (c.Batches != 2 || c.RoundTrips != 2*c.Batches) {
			t.Errorf("orders: %d batches, %d round trips; want 2 and one read + one write per batch", c.Batches, c.RoundTrips)
		}
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Collections {
		if len(c.Documents) != 1 || c.Documents[0].Version != c.TargetVersion {
			t.Errorf("%s versions after backfill: %+v", c.Name, c.Documents)
		}
	}
	// The upgraded documents are what the lazy path gives.
	var u bson.D
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: sampledata.ID("users", 0)}}).Decode(&u); err != nil {
		t.Fatal(err)
	}
	if b, _ := bson.MarshalExtJSON(u, false, false); !strings.Contains(string(b), `"contact":{"email":"ada.lovelace0@example.com"},"status":"active","version":3`) || strings.Contains(string(b), "legacyId") {
		t.Errorf("backfilled user = %s", b)
	}
	again, err := backfill.Run(ctx, r, backfill.Options{ClientSide: true})
	if err != nil || again.Collections[0].Upgraded != 0 || !again.Collections[0].Proven {
		t.Errorf("second backfill: %+v %v", again, err)
	}
}

func mustArray(t testing.TB, v bson.RawValue) []bson.RawValue {
	t.Helper()
	vals, err := v.Array().Values()
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// TestBackfillRefusesBeforeUp: documents are never upgraded past the
// applied migrations.
func TestBackfillRefusesBeforeUp(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	_, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"orders"}})
	// The library says what is missing; the command line adds what to run
	// (cmd/mongomig's backfill script test).
	if err == nil || !errors.Is(err, backfill.ErrNotApplied) || !strings.Contains(err.Error(), "orders: migration 4, which raises its documents to version 4, is not applied yet (the database is at 3)") {
		t.Fatalf("backfill before up: %v", err)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Errorf("users (current at 3) refused: %v", err)
	}
}

// TestBackfillStopsAndResumes: Ctrl-C (cancel) stops at a batch boundary
// with the checkpoint saved; the next run resumes after it.
func TestBackfillStopsAndResumes(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 120)
	r := counterRunner(t, db)
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, _ int64, i int) {
		if point == "backfill.batch" && i == 2 {
			cancel()
		}
	})
	res, err := backfill.Run(cctx, r, backfill.Options{Batch: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "interrupted" || res.Collections[0].Upgraded != 40 || res.Collections[0].Complete {
		t.Fatalf("first run = %+v", res.Collections[0])
	}
	backfill.SetHook(r, nil)
	var left []int64
	res, err = backfill.Run(ctx, r, backfill.WithProgress(backfill.Options{Batch: 20}, func(p events.BackfillBatch) { left = append(left, p.Remaining) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 4 || left[0] != 60 || left[3] != 0 {
		t.Errorf("remaining after each batch = %v, want 60 40 20 0", left)
	}
	c := res.Collections[0]
	if !c.Resumed || c.Upgraded != 80 || c.TotalUpgraded != 120 || !c.Proven {
		t.Fatalf("resumed run = %+v", c)
	}
	checkItems(t, db, 120)

	// --max-time stops on a deadline the same way.
	db2 := sandboxtest.Database(t, "app")
	insertItems(t, db2, 60)
	r2 := counterRunner(t, db2)
	res, err = backfill.Run(ctx, r2, backfill.Options{Batch: 10, MaxTime: time.Nanosecond})
	if err != nil || res.Stopped != "deadline" {
		t.Fatalf("max-time: %+v %v", res, err)
	}
}

// allDocs returns every document of every sample collection, sorted by
// _id, each with its top-level fields sorted by name: new fields written
// by one update are ordered by name (MongoDB 5+), so the two backfill
// paths may order top-level fields differently; everything else, embedded
// documents included, must be identical.
func allDocs(t *testing.T, db *mongo.Database) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, c := range []string{"users", "orders", "posts", "comments"} {
		cur, err := db.Collection(c).Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.D
		if err := cur.All(context.Background(), &docs); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			sort.SliceStable(d, func(i, j int) bool { return d[i].Key < d[j].Key })
			b, _ := bson.MarshalExtJSON(d, true, false)
			out[c] = append(out[c], string(b))
		}
	}
	return out
}

// TestBackfillServerSideMatchesClientSide: the server-side fast path
// gives byte-for-byte the documents the client path gives, and sends none.
func TestBackfillServerSideMatchesClientSide(t *testing.T) {
	ctx := context.Background()
	dbServer, _, rServer := sampleApplied(t)
	dbClient, _, rClient := sampleApplied(t)
	resS, err := backfill.Run(ctx, rServer, backfill.Options{ServerSide: true, AssumeNoWriters: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backfill.Run(ctx, rClient, backfill.Options{ClientSide: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range resS.Collections {
		if c.ServerSide != c.Upgraded || c.Upgraded == 0 || c.Batches != 0 || !c.Proven {
			t.Errorf("%s: server side %d of %d upgraded, %d client batches, proven %v (%s)", c.Collection, c.ServerSide, c.Upgraded, c.Batches, c.Proven, c.ServerSideNote)
		}
	}
	server, client := allDocs(t, dbServer), allDocs(t, dbClient)
	for coll := range client {
		if len(server[coll]) != len(client[coll]) {
			t.Fatalf("%s: %d vs %d documents", coll, len(server[coll]), len(client[coll]))
		}
		for i := range client[coll] {
			if server[coll][i] != client[coll][i] {
				t.Errorf("%s document %d differs:\n server %s\n client %s", coll, i, server[coll][i], client[coll][i])
			}
		}
	}
}

// TestBackfillServerSideResumes stops a server-side backfill between two
// units: a lazy read of a half-upgraded document resumes from its marker
// and equals the full upgrade, and the next backfill finishes every
// document exactly as the client path would.
func TestBackfillServerSideResumes(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	want, _, rc := sampleApplied(t)
	if _, err := backfill.Run(ctx, rc, backfill.Options{ClientSide: true, Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	backfill.SetHook(r, func(point string, from int64, k int) {
		if point == "backfill.unit" && k == 2 {
			cancel()
		}
	})
	if _, err := backfill.Run(cctx, r, backfill.Options{Collections: []string{"users"}, ServerSide: true, AssumeNoWriters: true}); err == nil {
		t.Log("the stop landed after the plan (nothing to resume)")
	}
	backfill.SetHook(r, nil)
	var half bson.D
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: sampledata.ID("users", 0)}}).Decode(&half); err != nil {
		t.Fatal(err)
	}
	if _, marked := bsonx.Lookup(half, version.MarkerField); !marked {
		t.Fatalf("no document left half-way: %v", half)
	}
	lazy, _, err := r.Registry().Upgrade("users", half)
	if err != nil {
		t.Fatal(err)
	}
	var full bson.D
	if err := want.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: sampledata.ID("users", 0)}}).Decode(&full); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(lazy, func(i, j int) bool { return lazy[i].Key < lazy[j].Key })
	sort.SliceStable(full, func(i, j int) bool { return full[i].Key < full[j].Key })
	lb, _ := bson.Marshal(lazy)
	fb, _ := bson.Marshal(full)
	if string(lb) != string(fb) {
		t.Errorf("lazy resume of a half-upgraded document:\n got %s\nwant %s", bson.Raw(lb), bson.Raw(fb))
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ServerSide: true, AssumeNoWriters: true}); err != nil {
		t.Fatal(err)
	}
	got, exp := allDocs(t, db)["users"], allDocs(t, want)["users"]
	for i := range exp {
		if got[i] != exp[i] {
			t.Errorf("user %d after resume:\n got %s\nwant %s", i, got[i], exp[i])
		}
	}
}

// TestBackfillRefusesInvalidUpgrades: users 7 and 23 have no email, so
// their upgrade lacks the contact 0003 requires, and order 13's qty 0
// breaks 0004's minimum. The backfill writes none of them (they used to
// become the current version silently, and the window then closed),
// groups them with their _ids, does not call the collection proven, and
// says failures remain.
func TestBackfillRefusesInvalidUpgrades(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleAppliedWith(t, false)
	res, err := backfill.Run(ctx, r, backfill.Options{ClientSide: true, Collections: []string{"users", "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.FailuresRemain() {
		t.Fatal("no failures reported")
	}
	for _, c := range res.Collections {
		want := map[string]int64{"users": 2, "orders": 1}[c.Collection]
		if len(c.Failed) != 1 || c.Failed[0].Rule != "validator" || c.Failed[0].Count != want || c.Proven {
			t.Errorf("%s: failed %+v, proven %v; want %d validator failures, not proven", c.Collection, c.Failed, c.Proven, want)
		}
	}
	var u bson.M
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: sampledata.ID("users", 7)}}).Decode(&u); err != nil {
		t.Fatal(err)
	}
	if _, upgraded := u["version"]; upgraded {
		t.Errorf("user 7 was written at a version whose validator it fails: %v", u)
	}
}
