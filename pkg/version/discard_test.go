package version_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestCountDiscardBlog counts what the blog's `unset: [comments]` would
// remove, on the sandbox: 47 non-empty arrays, 3,434 elements; the empty
// array, the null and the post without comments hold nothing.
func TestCountDiscardBlog(t *testing.T) {
	c := testCountDiscardBlog(t, sandboxtest.Database(t, "app"))
	t.Logf("counted by the server: %v", c.Server)
}

// TestCountDiscardBlogMongoDB is the same count on the second server,
// which has the aggregation operators: the server counts.
func TestCountDiscardBlogMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_countdiscard", "TestCountDiscardBlog counts on the sandbox")
	c := testCountDiscardBlog(t, db)
	if !c.Server {
		t.Error("the count was not made by the server, which has $isArray, $size, $type and $cond")
	}
}

func testCountDiscardBlog(t *testing.T, db *mongo.Database) version.DiscardCount {
	ctx := context.Background()
	if err := fixtures.LoadBlogUnset(ctx, db); err != nil {
		t.Fatal(err)
	}
	// A post already at version 2 has nothing removed by migration 2.
	if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: 99}, {Key: "title", Value: "new"}, {Key: "comments", Value: bson.A{"x"}}, {Key: "version", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	reg, err := version.New(fixtures.BlogUnsetFS(false))
	if err != nil {
		t.Fatal(err)
	}
	m, err := migration.Parse("0002_comments_collection.yaml", []byte(fixtures.BlogUnsetFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := reg.CountDiscard(ctx, db.Collection("posts"), migration.Discards(m)[0])
	if err != nil {
		t.Fatal(err)
	}
	if c.Documents != fixtures.BlogUnsetWithComments || c.Arrays != fixtures.BlogUnsetWithComments || c.Elements != fixtures.BlogUnsetComments || c.Objects != 0 {
		t.Errorf("count = %+v, want %d documents, %d arrays, %d elements", c, fixtures.BlogUnsetWithComments, fixtures.BlogUnsetWithComments, fixtures.BlogUnsetComments)
	}
	if got, want := c.Summary(), "removes 47 non-empty comments arrays, 3,434 elements"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	return c
}

// TestCountDiscardKinds: an unset counts scalars and non-empty documents
// too; a set counts only the non-empty arrays and documents it replaces
// (not a value equal to the one it sets); a path with an array index is
// counted client-side with the steps' path rules, and a path through an
// array by name counts nothing (the step does not reach into it).
func TestCountDiscardKinds(t *testing.T) {
	testCountDiscardKinds(t, sandboxtest.Database(t, "app"))
}

func TestCountDiscardKindsMongoDB(t *testing.T) {
	testCountDiscardKinds(t, sandboxtest.MongoDB(t, "mongomig_test_countkinds", "TestCountDiscardKinds counts on the sandbox"))
}

func testCountDiscardKinds(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "l", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: "text"}, {Key: "l", Value: bson.A{bson.D{{Key: "x", Value: 2}}, 3}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.D{}}, {Key: "l", Value: bson.A{}}},
		bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: bson.A{1, 2}}},
		bson.D{{Key: "_id", Value: 5}, {Key: "a", Value: bson.A{"same"}}},
	}
	if _, err := db.Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	reg, err := version.New(fixtures.BlogUnsetFS(false), version.WithCollections("c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op                        migration.Op
		path                      string
		value                     any
		docs, arrays, elems, objs int64
	}{
		{migration.OpUnset, "a", nil, 4, 2, 3, 1},
		{migration.OpSet, "a", bson.A{"same"}, 2, 1, 2, 1},
		{migration.OpUnset, "a.b", nil, 1, 0, 0, 0},
		{migration.OpUnset, "l.0", nil, 2, 0, 0, 2},
		{migration.OpUnset, "l.x", nil, 0, 0, 0, 0},
	} {
		d := migration.Discard{Migration: 1, Collection: "c", Op: tc.op, Path: tc.path, Value: tc.value}
		c, err := reg.CountDiscard(ctx, db.Collection("c"), d)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.op, tc.path, err)
		}
		if c.Documents != tc.docs || c.Arrays != tc.arrays || c.Elements != tc.elems || c.Objects != tc.objs {
			t.Errorf("%s %s: %+v, want documents %d arrays %d elements %d objects %d", tc.op, tc.path, c, tc.docs, tc.arrays, tc.elems, tc.objs)
		}
	}
}
