package report_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// TestDryRunPredictsUniqueIndexBuilds: 0001's unique index on email, were
// it not sparse, meets users 7 and 23 without email: MongoDB indexes both
// as null and the build fails with E11000 (the sandbox accepts it). The
// dry run predicts it, names a colliding _id and would reject; with
// sparse: true (as the samples now declare) it passes.
func TestDryRunPredictsUniqueIndexBuilds(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	notSparse := fstest.MapFS{}
	for k, v := range samples(t) {
		notSparse[k] = v
	}
	const f = "0001_create_users.yaml"
	notSparse[f] = &fstest.MapFile{Data: []byte(strings.Replace(string(notSparse[f].Data), "unique: true, sparse: true", "unique: true", 1))}
	for _, tc := range []struct {
		name  string
		fsys  fstest.MapFS
		fails bool
	}{{"not sparse", notSparse, true}, {"sparse", samples(t), false}} {
		rep, err := dryRun(t, db, tc.fsys, 1, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.IndexBuilds) != 1 {
			t.Fatalf("%s: index builds %+v", tc.name, rep.IndexBuilds)
		}
		b := rep.IndexBuilds[0]
		if b.Fails() != tc.fails {
			t.Errorf("%s: %+v, want fails=%v", tc.name, b, tc.fails)
		}
		if tc.fails && (b.Duplicates != 1 || b.MissingAsNull != 1 || len(b.ExampleIDs) != 1 || !strings.Contains(string(b.ExampleIDs[0]), "650100000000000000000017") || !rep.WouldReject) {
			t.Errorf("%s: %+v, wouldReject %v; want user 23 colliding with user 7 on null", tc.name, b, rep.WouldReject)
		}
	}
}

// TestIndexBuildNamesCollidingPairs: documents 98, 99 and 100 repeat the
// emails of 1, 2 and 3. The prediction names each key with both _ids
// (the earlier document too, which the example _ids leave out), and caps
// what it details: 5 keys, 5 _ids a key, strings cut to 20 characters,
// while the counts stay exact.
func TestIndexBuildNamesCollidingPairs(t *testing.T) {
	ctx := context.Background()
	fsys := fstest.MapFS{"0001_unique_email.yaml": &fstest.MapFile{Data: []byte(`description: Emails are unique.
collections:
  accounts:
    indexes:
      create:
        - {keys: {email: 1}, unique: true}
`)}}
	// predict runs the dry run and checks that the prediction read the
	// collection with one find and nothing else (the details cost no
	// round trip; the few documents fit in the first batch).
	predict := func(t *testing.T, docs []any) report.IndexBuild {
		t.Helper()
		rec := &cmdlog.Recorder{}
		db := sandboxtest.Connect(t, sandboxtest.Start(t).URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
		if _, err := db.Collection("accounts").InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		rec.Reset()
		rep, err := dryRun(t, db, fsys, 1, report.Options{ShowKeyValues: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.IndexBuilds) != 1 || !rep.WouldReject {
			t.Fatalf("index builds %+v, wouldReject %v", rep.IndexBuilds, rep.WouldReject)
		}
		var onAccounts []string
		for _, c := range rec.All() {
			coll, _ := c.Lookup("collection").StringValueOK() // getMore
			if elems, err := c.Elements(); err == nil && len(elems) > 0 {
				if name, _ := elems[0].Value().StringValueOK(); name == "accounts" || coll == "accounts" {
					onAccounts = append(onAccounts, elems[0].Key())
				}
			}
		}
		if !reflect.DeepEqual(onAccounts, []string{"find"}) {
			t.Errorf("commands on accounts %v, want one find", onAccounts)
		}
		return rep.IndexBuilds[0]
	}
	t.Run("three pairs", func(t *testing.T) {
		var docs []any
		for i := 1; i <= 10; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}})
		}
		for i := 1; i <= 3; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: 97 + i}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}})
		}
		b := predict(t, docs)
		want := []report.IndexCollision{
			{Key: `{"email":"u1@example.com"}`, Count: 2, IDs: []report.ExtJSON{"1", "98"}},
			{Key: `{"email":"u2@example.com"}`, Count: 2, IDs: []report.ExtJSON{"2", "99"}},
			{Key: `{"email":"u3@example.com"}`, Count: 2, IDs: []report.ExtJSON{"3", "100"}},
		}
		if b.Duplicates != 3 || b.CollidingKeys != 3 || !reflect.DeepEqual(b.Collisions, want) {
			t.Errorf("got %+v, want 3 duplicates on 3 keys %+v", b, want)
		}
	})
	t.Run("capped", func(t *testing.T) {
		long := strings.Repeat("x", 30)
		var docs []any
		for i := 1; i <= 7; i++ { // 7 documents share the first key
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "email", Value: long}})
		}
		for i := 1; i <= 6; i++ { // 6 more keys collide once each
			e := fmt.Sprintf("k%d", i)
			docs = append(docs, bson.D{{Key: "_id", Value: 10 + 2*i}, {Key: "email", Value: e}},
				bson.D{{Key: "_id", Value: 11 + 2*i}, {Key: "email", Value: e}})
		}
		b := predict(t, docs)
		first := report.IndexCollision{Key: report.ExtJSON(`{"email":"` + strings.Repeat("x", 20) + `…"}`), Count: 7,
			IDs: []report.ExtJSON{"1", "2", "3", "4", "5"}}
		if b.Duplicates != 12 || b.CollidingKeys != 7 || len(b.Collisions) != report.MaxCollisions || !reflect.DeepEqual(b.Collisions[0], first) {
			t.Fatalf("got %+v, want 12 duplicates on 7 keys, 5 detailed, the first %+v", b, first)
		}
		if last := b.Collisions[4]; last.Key != `{"email":"k4"}` || !reflect.DeepEqual(last.IDs, []report.ExtJSON{"18", "19"}) {
			t.Errorf("fifth key %+v, want k4 on 18 and 19", last)
		}
	})
	t.Run("missing and compound values", func(t *testing.T) {
		b := predict(t, []any{
			bson.D{{Key: "_id", Value: "a"}},
			bson.D{{Key: "_id", Value: "b"}},
			bson.D{{Key: "_id", Value: "c"}, {Key: "email", Value: bson.D{{Key: "user", Value: "someone"}, {Key: "domain", Value: "example.com"}}}},
			bson.D{{Key: "_id", Value: "d"}, {Key: "email", Value: bson.D{{Key: "user", Value: "someone"}, {Key: "domain", Value: "example.com"}}}},
		})
		want := []report.IndexCollision{
			{Key: `{"email":null}`, Count: 2, IDs: []report.ExtJSON{`"a"`, `"b"`}},
			{Key: `{"email":"{\"user\":\"someone\",\"d…"}`, Count: 2, IDs: []report.ExtJSON{`"c"`, `"d"`}},
		}
		if b.MissingAsNull != 1 || !reflect.DeepEqual(b.Collisions, want) {
			t.Errorf("got %+v, want %+v", b.Collisions, want)
		}
	})
}
