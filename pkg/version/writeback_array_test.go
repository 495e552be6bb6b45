package version_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// A guard on a field that held an array must not match that array nested
// in a new one: MongoDB's equality on a leaf array also compares each of
// its elements (src/mongo/db/matcher/path.cpp, BSONElementIterator: a leaf
// array yields each element, then the array itself), so {tags: [1, 2]}
// matches tags: [[1, 2], 3]. A writer who made that change between the
// read and the write-back must make the write-back match nothing, and an
// unchanged array must still match. The chain's func step makes the
// write-back guard every field as read. (Not on the sandbox: FerretDB v1
// refuses nested arrays, "nested arrays are not supported", so no writer
// can make the change there.)
func TestWriteBackArrayGuardIsExactMongoDB(t *testing.T) {
	testWriteBackArrayGuard(t, sandboxtest.MongoDB(t, "app", "FerretDB v1 stores no nested arrays, so the sandbox has no such writer").Collection("users"))
}

func testWriteBackArrayGuard(t *testing.T, coll *mongo.Collection) {
	ctx := context.Background()
	r := newRegistry(t)
	for _, tc := range []struct {
		name    string
		tags    any
		writer  any // the new tags, or nil for no writer
		wantWon bool
	}{
		{"array unchanged", bson.A{1, 2}, nil, true},
		{"array nested in a new one", bson.A{1, 2}, bson.A{bson.A{1, 2}, 3}, false},
		{"array of arrays nested again", bson.A{bson.A{1}}, bson.A{bson.A{bson.A{1}}, 2}, false},
		{"empty array nested", bson.A{}, bson.A{bson.A{}}, false},
		{"array of documents nested", bson.A{bson.D{{Key: "a", Value: 1}}}, bson.A{bson.A{bson.D{{Key: "a", Value: 1}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := bson.NewObjectID()
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Ada L"}, {Key: "email", Value: "a@x"}, {Key: "legacyId", Value: 1}, {Key: "tags", Value: tc.tags}}); err != nil {
				t.Fatal(err)
			}
			var read bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&read); err != nil {
				t.Fatal(err)
			}
			up, changed, err := r.Upgrade("users", read)
			if err != nil || !changed {
				t.Fatalf("upgrade: %v %v", changed, err)
			}
			if tc.writer != nil {
				if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tags", Value: tc.writer}}}}); err != nil {
					t.Fatal(err)
				}
			}
			won, err := r.WriteBack(ctx, coll, read, up)
			if err != nil || won != tc.wantWon {
				t.Fatalf("WriteBack = %v, %v; want won=%v", won, err, tc.wantWon)
			}
			var got bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !tc.wantWon {
				want, _ := bson.Marshal(bson.D{{Key: "tags", Value: tc.writer}})
				gotTags, _ := bson.Marshal(bson.D{{Key: "tags", Value: lookup(got, "tags")}})
				if string(want) != string(gotTags) {
					t.Errorf("the writer's tags were overwritten: stored %s", js(got))
				}
			}
		})
	}
}

func lookup(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
