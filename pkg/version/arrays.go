package version

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"weak"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Arrays is how a guard on a field that held an array is written: the
// one a server needs to match that field only while it still holds the
// array as read.
//
// A query's equality on an array also matches an array that holds it as
// an element: src/mongo/db/matcher/path.cpp, BSONElementIterator, yields
// a leaf array's elements and then the array itself, so {f: [1, 2]}
// matches f: [[1, 2], 3] as well as f: [1, 2]. A writer who wrapped the
// array read into a new one between the read and the guarded write would
// have that write overwrite it.
type Arrays uint8

const (
	// ExactArrays (the default, and MongoDB's) excludes the arrays
	// holding the value: {f: {$eq: v, $not: {$elemMatch: {$eq: v}}}}.
	// $elemMatch tests each element of the field's array once, as a
	// value, without descending into it
	// (src/mongo/db/matcher/expression_array.cpp,
	// ElemMatchValueMatchExpression::_arrayElementMatchesAll calls each
	// operator's matchesSingleElement), so it is true exactly when an
	// element equals v; the field itself never does, an array cannot hold
	// itself. The guard matches f: v and nothing else $eq matches. The
	// second test server (FerretDB v2 on DocumentDB) evaluates it so.
	ExactArrays Arrays = iota
	// EqualArrays is the plain {f: {$eq: v}}, for FerretDB v1 alone: it
	// stores no nested arrays (internal/types/document_validation.go
	// refuses them: "nested arrays are not supported"), so no writer can
	// make the change the exact form guards against, and its $elemMatch
	// applies the operators to the array itself
	// (internal/handler/common/filter.go, filterFieldExprElemMatch), so
	// the exact form would match nothing there and the write would be
	// retried forever.
	EqualArrays
)

// ArraysFor is the Arrays a server needs, given the ferretdbVersion field
// of its buildInfo (FerretDB v1's; empty on every other server): the
// exact form everywhere but FerretDB v1 (an embedded build reports
// "unknown").
func ArraysFor(ferretDBVersion string) Arrays {
	v := strings.TrimPrefix(ferretDBVersion, "v")
	if v == "" {
		return ExactArrays
	}
	if major, _, _ := strings.Cut(v, "."); major == "0" || major == "1" || major == "unknown" {
		return EqualArrays
	}
	return ExactArrays
}

// arraysOf caches ArraysOf per client (a weak key: a client no longer
// used is not kept alive).
var arraysOf sync.Map // weak.Pointer[mongo.Client] -> Arrays

// ArraysOf is the Arrays that c's server needs ([ArraysFor] its
// buildInfo), read once per client: a read, no write.
func ArraysOf(ctx context.Context, c *mongo.Client) (Arrays, error) {
	key := weak.Make(c)
	if a, ok := arraysOf.Load(key); ok {
		return a.(Arrays), nil
	}
	var build struct {
		FerretDBVersion string `bson:"ferretdbVersion"`
	}
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err != nil {
		return ExactArrays, fmt.Errorf("buildInfo: %w", err)
	}
	a := ArraysFor(build.FerretDBVersion)
	arraysOf.Store(key, a)
	return a, nil
}

// SameArray is the query operator document matching a field (or a
// dotted path) that holds the array v as read, as a says: {$eq: v,
// $not: {$elemMatch: {$eq: v}}}, or {$eq: v} for [EqualArrays]. v is the
// array's value as sent (a bson.A, whose elements may be RawValues).
func SameArray(v any, a Arrays) bson.D {
	if a == EqualArrays {
		return bson.D{{Key: "$eq", Value: v}}
	}
	return bson.D{{Key: "$eq", Value: v}, notHolding(v)}
}

// notHolding is {$not: {$elemMatch: {$eq: v}}}: no element equals v.
func notHolding(v any) bson.E {
	return bson.E{Key: "$not", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$eq", Value: v}}}}}
}
