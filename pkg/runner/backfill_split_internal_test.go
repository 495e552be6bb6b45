package runner

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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
