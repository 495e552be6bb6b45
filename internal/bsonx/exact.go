package bsonx

import "go.mongodb.org/mongo-driver/v2/bson"

// SameAs is the query operator document matching a field that holds v
// exactly, not an array that holds v as one of its elements. MongoDB's
// equality on a field holding an array also compares each element (a leaf
// array yields each element, then itself: src/mongo/db/matcher/path.cpp,
// BSONElementIterator), so {f: 5} matches f: [5, 6] and {f: [1, 2]}
// matches f: [[1, 2], 3]. For an array v the arrays holding v as an
// element are excluded with $elemMatch (which compares each element once,
// without descending further); for any other v, arrays are excluded.
// $eq compares a document v as a value ({$kind: 1} is not read as an
// operator). An array must be given as a bson.A. v must not be nil or
// absent: those need their own clause.
func SameAs(v any) bson.D {
	if x, ok := v.(bson.A); ok {
		return bson.D{{Key: "$eq", Value: x}, {Key: "$not", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$eq", Value: x}}}}}}
	}
	return bson.D{{Key: "$eq", Value: v}, {Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}}
}
