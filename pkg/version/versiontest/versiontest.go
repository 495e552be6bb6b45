// Package versiontest holds the table of hostile stored version values
// that the tests of pkg/version (the lazy path) and pkg/runner (backfill,
// validate, status) run through each path, so that every path is held to
// the same rule: see [version.Registry.VersionIs].
package versiontest

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// StoredVersion is one value of a stored document's version field and
// what it is under the rule: a version, or invalid.
type StoredVersion struct {
	Name    string
	Value   any // unused when Missing
	Missing bool
	Version int64 // when Valid
	Valid   bool
	Sandbox bool // FerretDB can store it (it refuses Decimal128)
}

// StoredVersions is issue 17's table of hostile version values (negative,
// fractional, arrays, other types), with the valid ones around them.
var StoredVersions = []StoredVersion{
	{Name: "missing", Missing: true, Valid: true, Sandbox: true},
	{Name: "null", Value: nil, Valid: true, Sandbox: true},
	{Name: "bson.Null{}", Value: bson.Null{}, Valid: true, Sandbox: true},
	{Name: "int32 0", Value: int32(0), Valid: true, Sandbox: true},
	{Name: "int32 1", Value: int32(1), Version: 1, Valid: true, Sandbox: true},
	{Name: "int64 1", Value: int64(1), Version: 1, Valid: true, Sandbox: true},
	{Name: "double 1", Value: 1.0, Version: 1, Valid: true, Sandbox: true},
	{Name: "double -0", Value: math.Copysign(0, -1), Valid: true, Sandbox: true},
	{Name: "int32 -1", Value: int32(-1), Sandbox: true},
	{Name: "int64 min", Value: int64(math.MinInt64), Sandbox: true},
	{Name: "double -1", Value: -1.0, Sandbox: true},
	{Name: "double 0.5", Value: 0.5, Sandbox: true},
	// A fraction above the versions too: VersionAtLeast matched it.
	{Name: "double 2.5", Value: 2.5, Sandbox: true},
	// Doubles are exact whole numbers only below 2^53.
	{Name: "double 2^53", Value: float64(1 << 53), Sandbox: true},
	{Name: "double 1e300", Value: 1e300, Sandbox: true},
	// MongoDB's comparisons with NaN are all false but $eq
	// (expression_leaf.cpp, ComparisonMatchExpressionBase::compare), so
	// neither {$lt: 0} nor {$gte: 2^53} finds it. FerretDB drops the
	// connection on a NaN and refuses infinities.
	{Name: "double NaN", Value: math.NaN()},
	{Name: "double +Inf", Value: math.Inf(1)},
	{Name: "double -Inf", Value: math.Inf(-1)},
	{Name: "array [1, 2]", Value: bson.A{int32(1), int32(2)}, Sandbox: true},
	{Name: "array [0, 5]", Value: bson.A{int32(0), int32(5)}, Sandbox: true},
	{Name: "array [1]", Value: bson.A{int32(1)}, Sandbox: true},
	{Name: "array [null]", Value: bson.A{nil}, Sandbox: true},
	{Name: "empty array", Value: bson.A{}, Sandbox: true},
	{Name: "string 1", Value: "1", Sandbox: true},
	{Name: "bool", Value: true, Sandbox: true},
	{Name: "document", Value: bson.D{{Key: "v", Value: int32(1)}}, Sandbox: true},
	{Name: "decimal 1", Value: bson.NewDecimal128(0x3040000000000000, 1)},
}

// Doc is a document with _id id, a field a = "x" and this version value.
func (s StoredVersion) Doc(id any) bson.D {
	d := bson.D{{Key: "_id", Value: id}, {Key: "a", Value: "x"}}
	if !s.Missing {
		d = append(d, bson.E{Key: "version", Value: s.Value})
	}
	return d
}
