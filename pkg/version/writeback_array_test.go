package version_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// A guard on a field that held an array must not match that array nested
// in a new one: a query's equality on a leaf array also compares each of
// its elements (src/mongo/db/matcher/path.cpp, BSONElementIterator: a
// leaf array yields each element, then the array itself), so {tags: [1,
// 2]} matches tags: [[1, 2], 3]. A writer who made that change between
// the read and the write-back must make the write-back match nothing, the
// retry from a fresh read keeps the writer's value, and an unchanged
// array must still match. The chain's func step makes the write-back
// guard every field as read.
func TestWriteBackArrayGuardIsExactMongoDB(t *testing.T) {
	testWriteBackArrayGuard(t, sandboxtest.MongoDB(t, "app", "the sandbox run is TestWriteBackArrayGuardSandbox").Collection("users"))
}

// On the sandbox (FerretDB v1) no writer can nest an array (it refuses
// nested arrays), and an unchanged array must still be written back: the
// exact form's $elemMatch would match nothing there (see version.Arrays).
func TestWriteBackArrayGuardSandbox(t *testing.T) {
	testWriteBackArrayGuard(t, sandboxtest.Database(t, "app").Collection("users"))
}

func testWriteBackArrayGuard(t *testing.T, coll *mongo.Collection) {
	ctx := context.Background()
	r := newRegistry(t)
	for _, tc := range []struct {
		name   string
		tags   any
		writer any // the new tags, or nil for no writer
	}{
		{"array unchanged", bson.A{1, 2}, nil},
		{"empty array unchanged", bson.A{}, nil},
		{"array of documents unchanged", bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{}}, nil},
		{"array with null unchanged", bson.A{nil, "x"}, nil},
		{"array nested in a new one", bson.A{1, 2}, bson.A{bson.A{1, 2}, 3}},
		{"array nested alone", bson.A{1, 2}, bson.A{bson.A{1, 2}}},
		{"array of arrays nested again", bson.A{bson.A{1}}, bson.A{bson.A{bson.A{1}}, 2}},
		{"empty array nested", bson.A{}, bson.A{bson.A{}}},
		{"array of documents nested", bson.A{bson.D{{Key: "a", Value: 1}}}, bson.A{bson.A{bson.D{{Key: "a", Value: 1}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := bson.NewObjectID()
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Ada L"}, {Key: "email", Value: "a@x"}, {Key: "legacyId", Value: 1}, {Key: "tags", Value: tc.tags}}); err != nil {
				if strings.Contains(err.Error(), "nested arrays are not supported") {
					t.Skip("FerretDB v1 stores no nested arrays")
				}
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
				_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tags", Value: tc.writer}}}})
				if err != nil && strings.Contains(err.Error(), "nested arrays are not supported") {
					t.Skip("FerretDB v1 stores no nested arrays: no writer can make this change")
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			won, err := r.WriteBack(ctx, coll, read, up)
			if err != nil || won != (tc.writer == nil) {
				t.Fatalf("WriteBack = %v, %v; want won=%v", won, err, tc.writer == nil)
			}
			if won {
				return
			}
			// The retry from a fresh read wins and keeps the writer's value.
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&read); err != nil {
				t.Fatal(err)
			}
			if up, _, err = r.Upgrade("users", read); err != nil {
				t.Fatal(err)
			}
			if won, err := r.WriteBack(ctx, coll, read, up); err != nil || !won {
				t.Fatalf("retried WriteBack = %v, %v; want won", won, err)
			}
			var got bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if want, got := marshalField(t, "tags", tc.writer), marshalField(t, "tags", lookupField(got, "tags")); want != got {
				t.Errorf("the writer's tags were overwritten: stored %s", got)
			}
		})
	}
}

func marshalField(t *testing.T, k string, v any) string {
	t.Helper()
	b, err := bson.MarshalExtJSON(bson.D{{Key: k, Value: v}}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lookupField(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
