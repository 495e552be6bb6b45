package integrity

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/testhook"
)

func findOpts(projection bson.D, batch int) *options.FindOptionsBuilder {
	o := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(int32(min(batch, 10000)))
	if projection != nil {
		o.SetProjection(projection)
	}
	return o
}

// distinct keeps the first of each value.
func distinct(vals []bson.RawValue) []bson.RawValue {
	seen := map[string]bool{}
	var out []bson.RawValue
	for _, v := range vals {
		if !seen[key(v)] {
			seen[key(v)] = true
			out = append(out, v)
		}
	}
	return out
}

// ProcessHook is the internal/testhook key of a hook every checker of the
// process calls when none is set for the checker itself: a test binary
// that runs the mongomig command (whose checker it never sees) kills it
// or acts as another writer at a point of its repair.
const ProcessHook = "pkg/integrity"

func (c *Checker) hook() testhook.Func {
	if h := testhook.Get(c); h != nil {
		return h
	}
	return testhook.Get(ProcessHook)
}
