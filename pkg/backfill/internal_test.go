package backfill

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

func TestQuantiles(t *testing.T) {
	ints := func(vs ...int32) []bson.RawValue {
		out := make([]bson.RawValue, len(vs))
		for i, v := range vs {
			_, b, _ := bson.MarshalValue(v)
			out[i] = bson.RawValue{Type: bson.TypeInt32, Value: b}
		}
		return out
	}
	str := func(a bson.A) string {
		s := ""
		for _, v := range a {
			s += v.(bson.RawValue).String() + " "
		}
		return s
	}
	for _, c := range []struct {
		sorted []bson.RawValue
		ranges int64
		want   string
	}{
		// 8 samples, 4 ranges: every second one from the second on.
		{ints(0, 1, 2, 3, 4, 5, 6, 7), 4, `{"$numberInt":"2"} {"$numberInt":"4"} {"$numberInt":"6"} `},
		// Fewer samples than ranges: each split once.
		{ints(10, 20), 4, `{"$numberInt":"10"} {"$numberInt":"20"} `},
		{ints(), 4, ``},
		{ints(1, 2, 3), 1, ``},
	} {
		if got := str(quantiles(c.sorted, c.ranges)); got != c.want {
			t.Errorf("quantiles(%d samples, %d ranges) = %q, want %q", len(c.sorted), c.ranges, got, c.want)
		}
	}
}

// TestPatchRaw: the patched document is the upgraded one, field for field,
// in the order the server keeps (fields in place, new ones appended).
func TestPatchRaw(t *testing.T) {
	before := bson.D{
		{Key: "_id", Value: bson.NewObjectID()}, {Key: "email", Value: "a@b"}, {Key: "n", Value: int32(1)},
		{Key: "tags", Value: bson.A{"x", int64(2)}}, {Key: "keep", Value: bson.D{{Key: "k", Value: true}}},
	}
	after := bson.D{
		{Key: "_id", Value: before[0].Value}, {Key: "n", Value: int64(2)}, {Key: "tags", Value: bson.A{"y"}},
		{Key: "keep", Value: bson.D{{Key: "k", Value: true}}},
		{Key: "contact", Value: bson.D{{Key: "email", Value: "a@b"}, {Key: "at", Value: bson.DateTime(5)}, {Key: "none", Value: nil}}},
		{Key: "score", Value: 1.5}, {Key: "dec", Value: bson.NewDecimal128(1, 2)},
	}
	delta, err := version.DeltaOf(before, after)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bson.Marshal(before)
	got, err := patchRaw(nil, raw, delta.Update)
	if err != nil {
		t.Fatal(err)
	}
	// In place: _id, n, tags, keep; appended: the new fields in $set order.
	want := bson.D{after[0], after[1], after[2], after[3], after[4], after[5], after[6]}
	wb, _ := bson.MarshalExtJSON(want, true, false)
	gb, _ := bson.MarshalExtJSON(bson.Raw(got), true, false)
	if string(wb) != string(gb) {
		t.Errorf("patched\n got  %s\n want %s", gb, wb)
	}
}
