package integrity

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// exactFilter is filter, a fix's guard as built (guard in values.go),
// with each guard on an array made exact where the server needs it
// ([version.SameArray]): a query's equality on an array also matches an
// array holding it (src/mongo/db/matcher/path.cpp, BSONElementIterator:
// {f: [1, 2]} matches f: [[1, 2], 3]), so a writer who nested the array
// read between the read and the guarded write would have it overwritten
// (an element path such as classes.1.credits then writes into another
// element). FerretDB v1, which stores no nested array, keeps the plain
// equality ([version.ArraysOf]: one buildInfo per client).
func (c *Checker) exactFilter(ctx context.Context, filter bson.D) (bson.D, error) {
	var out bson.D
	for i, e := range filter {
		op, ok := e.Value.(bson.D)
		if !ok || len(op) != 1 || op[0].Key != "$eq" {
			continue
		}
		v, ok := op[0].Value.(bson.RawValue)
		if !ok || v.Type != bson.TypeArray {
			continue
		}
		a, err := version.ArraysOf(ctx, c.db.Client())
		if err != nil {
			return nil, err
		}
		if a == version.EqualArrays {
			return filter, nil
		}
		if out == nil {
			out = append(bson.D(nil), filter...)
		}
		out[i].Value = version.SameArray(v, a)
	}
	if out == nil {
		return filter, nil
	}
	return out, nil
}
