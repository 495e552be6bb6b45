package version

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// The filters below are the server's side of the rule in the package
// comment. MongoDB compares a field that holds an array element by element,
// for equality, ranges and $type alike
// (src/mongo/db/matcher/expression_path.h, PathMatchExpression::matches:
// any element that matches makes the document match; expression_type.h:
// $type traverses leaf arrays), so {version: 1} also matches version: [0,
// 1], and {$type: "int"} matches [1]. Every filter therefore excludes
// arrays with {$not: {$type: "array"}}, and names the number types it
// accepts, which leaves Decimal128 out (FerretDB knows no "decimal" alias,
// so the filters never name it). A double is a version only without a
// fraction: {$bitsAllClear: 0} tests no bit but, on MongoDB as on
// FerretDB, matches only a number that is a whole 64-bit integer
// (expression_leaf.cpp, BitTestMatchExpression::matchesSingleElement: a
// NaN or a double with a fraction never matches; $mod would not do, it
// truncates the double first), so a fractional version is invalid for
// every filter, whatever its value.

// maxDouble is the bound on a version stored as a double: every whole
// number below 2^53 is exact as a double, so it compares exactly with
// integers; a double at or above it is not a version.
const maxDouble = 1 << 53

// versionTypes are the BSON types a version v may have: a double only
// below maxDouble.
func versionTypes(v int64) bson.A {
	if v >= maxDouble {
		return bson.A{"int", "long"}
	}
	return bson.A{"int", "long", "double"}
}

var notArray = bson.D{{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}}

// whole is the clause matching a number without a fraction (see the rule
// above).
var whole = bson.E{Key: "$bitsAllClear", Value: int32(0)}

// VersionIs is the filter matching exactly the documents at version v:
// for v = 0 a missing or null version field or a numeric 0, otherwise a
// number equal to v. It never matches an array, a Decimal128 or any
// other type (see the rule above).
func (r *Registry) VersionIs(v int64) bson.D {
	f := r.field
	num := bson.E{Key: f, Value: bson.D{{Key: "$eq", Value: versionValue(v)}, {Key: "$type", Value: versionTypes(v)}, notArray[0]}}
	if v != 0 {
		return bson.D{num}
	}
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: f, Value: bson.D{{Key: "$type", Value: "null"}, notArray[0]}}},
		bson.D{num},
	}}}
}

// VersionAtLeast matches the documents at a valid version v or above.
func (r *Registry) VersionAtLeast(v int64) bson.D {
	if v <= 0 {
		return bson.D{{Key: "$nor", Value: bson.A{r.VersionInvalid()}}}
	}
	f := r.field
	ints := bson.D{{Key: f, Value: bson.D{{Key: "$gte", Value: versionValue(v)}, {Key: "$type", Value: bson.A{"int", "long"}}, notArray[0]}}}
	if v >= maxDouble {
		return ints
	}
	return bson.D{{Key: "$or", Value: bson.A{
		ints,
		bson.D{{Key: f, Value: bson.D{{Key: "$gte", Value: versionValue(v)}, {Key: "$lt", Value: float64(maxDouble)}, {Key: "$type", Value: "double"}, whole, notArray[0]}}},
	}}}
}

// VersionBelow matches every document a backfill to target must visit:
// those below target, and those whose version is invalid (so that the
// backfill reports them as failures and never proves the collection
// upgraded while one remains). It is the complement of
// [Registry.VersionAtLeast].
func (r *Registry) VersionBelow(target int64) bson.D {
	return bson.D{{Key: "$nor", Value: bson.A{r.VersionAtLeast(target)}}}
}

// VersionNot matches the documents not at version v, invalid ones
// included: the complement of [Registry.VersionIs].
func (r *Registry) VersionNot(v int64) bson.D {
	return bson.D{{Key: "$nor", Value: bson.A{r.VersionIs(v)}}}
}

// VersionInvalid matches the documents whose version field is neither
// missing, null nor a non-negative whole number of an accepted type (a
// double with a fraction, or at or above 2^53, is invalid; see the rule
// above).
func (r *Registry) VersionInvalid() bson.D {
	f := r.field
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: f, Value: bson.D{{Key: "$type", Value: "array"}}}},
		bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: true}, {Key: "$not", Value: bson.D{{Key: "$type", Value: bson.A{"null", "int", "long", "double"}}}}}}},
		bson.D{{Key: f, Value: bson.D{{Key: "$lt", Value: 0}}}},
		// A NaN is neither below 0 nor at or above 2^53: every comparison
		// with it but $eq is false (expression_leaf.cpp,
		// ComparisonMatchExpressionBase::compare). A double not at or above
		// 0 is a negative one or a NaN; FerretDB refuses a NaN in a filter.
		bson.D{{Key: f, Value: bson.D{{Key: "$type", Value: "double"}, {Key: "$not", Value: bson.D{{Key: "$gte", Value: 0}}}}}},
		bson.D{{Key: f, Value: bson.D{{Key: "$gte", Value: float64(maxDouble)}, {Key: "$type", Value: "double"}}}},
		// A fraction (a NaN too).
		bson.D{{Key: f, Value: bson.D{{Key: "$type", Value: "double"}, {Key: "$not", Value: bson.D{whole}}}}},
	}}}
}

// ParseVersion applies the rule to one value of the version field, as a
// $group on it returns it: the zero RawValue (missing) and null are
// version 0; ok is false for anything that is not a version.
func ParseVersion(rv bson.RawValue) (v int64, ok bool) {
	if rv.Type == 0 {
		return 0, true
	}
	v, _, ok = rawValueVersion(bsoncore.Value{Type: bsoncore.Type(rv.Type), Data: rv.Value})
	return v, ok
}
