package version_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

func TestArraysFor(t *testing.T) {
	for v, want := range map[string]version.Arrays{
		"": version.ExactArrays, "unknown": version.EqualArrays, "v1.24.2": version.EqualArrays,
		"1.24.2": version.EqualArrays, "v0.9.0": version.EqualArrays, "v2.5.0": version.ExactArrays,
	} {
		if got := version.ArraysFor(v); got != want {
			t.Errorf("ArraysFor(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestSameArrayOnServer evaluates version.SameArray, as ArraysOf picks it
// for the server, on the documents a writer may leave: it must match the
// array as read, top level or at a dotted path inside a document, and no
// array holding it. Where the path's parent became an array of documents
// holding the array ({a: [{b: v}]}), a query's path yields each element's
// b, so the guard still matches (src/mongo/db/matcher/path.cpp); an update
// of a.b there is refused by the server (it names no field of an array),
// so no write is lost: pinned too. Documents the sandbox cannot store
// (nested arrays) are left out there.
func TestSameArrayOnServer(t *testing.T) { sameArrayOnServer(t, sandboxtest.Database(t, "app")) }

func TestSameArrayOnServerMongoDB(t *testing.T) {
	sameArrayOnServer(t, sandboxtest.MongoDB(t, "mongomig_test_same_array", "TestSameArrayOnServer covers the sandbox"))
}

func sameArrayOnServer(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	c := db.Collection("docs")
	arrays, err := version.ArraysOf(ctx, db.Client())
	if err != nil {
		t.Fatal(err)
	}
	if arrays == version.EqualArrays {
		// Why: FerretDB v1's $elemMatch tests the array itself, so the
		// exact form matches nothing on an unchanged array there.
		id := bson.NewObjectID()
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "f", Value: bson.A{1, 2}}}); err != nil {
			t.Fatal(err)
		}
		n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}, {Key: "f", Value: version.SameArray(bson.A{1, 2}, version.ExactArrays)}})
		if err != nil || n != 0 {
			t.Errorf("the exact form on this server: matched %d (%v); EqualArrays is here because it matched nothing", n, err)
		}
	}
	for _, v := range []bson.A{{1, 2}, {}, {bson.D{{Key: "a", Value: 1}}}, {nil}, {"x", 1.5, nil}, {bson.A{1}, bson.A{2}}} {
		for _, tc := range []struct {
			name, path string
			doc        bson.D
			match      bool
		}{
			{"same", "f", bson.D{{Key: "f", Value: v}}, true},
			{"nested", "f", bson.D{{Key: "f", Value: bson.A{v, 3}}}, false},
			{"nested alone", "f", bson.D{{Key: "f", Value: bson.A{v}}}, false},
			{"nested twice", "f", bson.D{{Key: "f", Value: bson.A{bson.A{v}}}}, false},
			{"in a document", "f", bson.D{{Key: "f", Value: bson.D{{Key: "x", Value: v}}}}, false},
			{"dotted same", "a.b", bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: v}}}}, true},
			{"dotted nested", "a.b", bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: bson.A{v, 1}}}}}, false},
			{"dotted parent an array, nested", "a.b", bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: bson.A{v}}}}}}, false},
			{"dotted parent an array", "a.b", bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: v}}}}}, true},
		} {
			id := bson.NewObjectID()
			if _, err := c.InsertOne(ctx, append(bson.D{{Key: "_id", Value: id}}, tc.doc...)); err != nil {
				if strings.Contains(err.Error(), "nested arrays are not supported") {
					continue
				}
				t.Fatal(err)
			}
			f := bson.D{{Key: "_id", Value: id}, {Key: tc.path, Value: version.SameArray(v, arrays)}}
			n, err := c.CountDocuments(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if (n == 1) != tc.match {
				t.Errorf("%v, %s %v: matched %d, want match=%v", v, tc.name, tc.doc, n, tc.match)
			}
			if tc.name == "dotted parent an array" {
				_, err := c.UpdateOne(ctx, f, bson.D{{Key: "$set", Value: bson.D{{Key: "a.b", Value: "new"}}}})
				if err == nil {
					t.Errorf("%v: $set a.b through the array a was not refused", v)
				}
			}
		}
	}
}
