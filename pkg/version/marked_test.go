package version_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// markedCases are values of MarkerField and whether Marked matches them.
// MongoDB's $type and equality traverse arrays, at the leaf and on the way
// (src/mongo/db/matcher/expression_type.h, TypeMatchExpression:
// LeafArrayBehavior::kTraverse, NonLeafArrayBehavior::kTraverse), so a
// marker in an array, or a tag or number in one, would match a bare
// clause: every clause of Marked excludes arrays.
var markedCases = []struct {
	name  string
	value any
	want  bool
}{
	{"a marker", marker(int32(0), int32(2), int32(1)), true},
	{"a marker with long and double numbers", marker(int64(1), 3.0, int64(2)), true},
	// The documented limit: no filter without $expr counts an object's keys.
	{"a marker with one more key", append(marker(int32(0), int32(2), int32(1)), bson.E{Key: "x", Value: 1}), true},
	{"a string", "mine", false},
	{"a number", int32(1), false},
	{"the application's document", bson.D{{Key: "step", Value: int32(3)}}, false},
	{"the tag alone", bson.D{{Key: "mongomig", Value: "backfill"}}, false},
	{"another tag", bson.D{{Key: "mongomig", Value: "other"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(2)}, {Key: "step", Value: int32(1)}}, false},
	{"the tag in an array", bson.D{{Key: "mongomig", Value: bson.A{"backfill"}}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(2)}, {Key: "step", Value: int32(1)}}, false},
	{"a marker in an array", bson.A{marker(int32(0), int32(2), int32(1))}, false},
	{"a step that is a string", marker(int32(0), int32(2), "1"), false},
	{"a from in an array", marker(bson.A{int32(0)}, int32(2), int32(1)), false},
	{"a negative to", marker(int32(0), int32(-2), int32(1)), false},
	{"a fractional step", marker(int32(0), int32(2), 1.5), false},
	{"no step", bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(2)}}, false},
}

func marker(from, to, step any) bson.D {
	return bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: from}, {Key: "to", Value: to}, {Key: "step", Value: step}}
}

// TestMarkedMatchesOnlyTheMarkerShape: down's partway check counts the
// documents Marked matches; a field of that name in any other shape is the
// application's own, or a marker the server-side backfill never clears.
func TestMarkedMatchesOnlyTheMarkerShape(t *testing.T) {
	checkMarked(t, sandboxtest.Database(t, "app").Collection("marked"))
}

// TestMarkedMatchesOnlyTheMarkerShapeMongoDB is the same on a real MongoDB,
// whose array traversal the filter is written for.
func TestMarkedMatchesOnlyTheMarkerShapeMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_marked", "the sandbox test is TestMarkedMatchesOnlyTheMarkerShape")
	checkMarked(t, db.Collection("marked"))
}

func checkMarked(t *testing.T, coll *mongo.Collection) {
	t.Helper()
	ctx := context.Background()
	for i, tc := range markedCases {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: version.MarkerField, Value: tc.value}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(len(markedCases))}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, version.Marked())
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID int32 `bson:"_id"`
	}
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	matched := map[int32]bool{}
	for _, g := range got {
		matched[g.ID] = true
	}
	for i, tc := range markedCases {
		if matched[int32(i)] != tc.want {
			t.Errorf("%s: matched %v, want %v", tc.name, matched[int32(i)], tc.want)
		}
	}
	if matched[int32(len(markedCases))] {
		t.Error("a document without the field matched")
	}
}
