package validator

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// number checks minimum, maximum and multipleOf on a BSON number.
//
// minimum and maximum become $gte/$gt and $lte/$lt match expressions
// (parseMinimum, parseMaximum in src/mongo/db/matcher/schema/
// json_schema_parser.cpp), which compare exactly across numeric types and
// treat NaN specially: NaN satisfies neither bound unless the bound is NaN
// too and not exclusive (ComparisonMatchExpressionBase::compare,
// src/mongo/db/matcher/expression_leaf.cpp).
func (v *validation) number(n *node, val bsoncore.Value) {
	if n.minimum != nil && !within(val, *n.minimum, n.exclusiveMin, 1) {
		op := ">="
		if n.exclusiveMin {
			op = ">"
		}
		v.fail("minimum", func() string { return fmt.Sprintf("must be %s %s", op, show(*n.minimum)) }, &val)
	}
	if n.maximum != nil && !within(val, *n.maximum, n.exclMax, -1) {
		op := "<="
		if n.exclMax {
			op = "<"
		}
		v.fail("maximum", func() string { return fmt.Sprintf("must be %s %s", op, show(*n.maximum)) }, &val)
	}
	if n.multipleOf != nil && !multipleOf(val, n.multipleOf) {
		v.fail("multipleOf", func() string { return "must be a multiple of " + n.multipleOf.FloatString(digits(n.multipleOf)) }, &val)
	}
}

// within reports whether val >= bound (sign 1) or val <= bound (sign -1),
// strictly when exclusive.
func within(val, bound bsoncore.Value, exclusive bool, sign int) bool {
	if nanVal, nanBound := isNaN(val), isNaN(bound); nanVal || nanBound {
		return !exclusive && nanVal && nanBound
	}
	c := compareNumbers(val, bound) * sign
	if exclusive {
		return c > 0
	}
	return c >= 0
}

// multipleOf is MongoDB's $_internalSchemaFmod with remainder 0: the value,
// as a Decimal128, modulo the divisor is zero
// (src/mongo/db/matcher/schema/expression_internal_schema_fmod.cpp). NaN and
// infinities never are (their modulo is NaN).
func multipleOf(val bsoncore.Value, divisor *big.Rat) bool {
	x := asDecimal(val)
	if x == nil {
		return false
	}
	return x.Quo(x, divisor).IsInt()
}

// asDecimal is BSONElement::numberDecimal() as an exact rational: ints and
// longs exactly, decimals exactly, doubles rounded to 15 significant digits
// (the Decimal128(double) constructor's default kRoundTo15Digits,
// src/mongo/platform/decimal128.h). It returns nil for NaN and infinities.
func asDecimal(v bsoncore.Value) *big.Rat {
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64:
		i, _ := integer(v)
		return new(big.Rat).SetInt64(i)
	case bsoncore.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'e', 14, 64))
		if !ok {
			return nil
		}
		return r
	case bsoncore.TypeDecimal128:
		d := decimalOf(v)
		if d.IsNaN() || d.IsInf() != 0 {
			return nil
		}
		return decimalRat(d)
	}
	return nil
}

// digits is how many decimals print r exactly (or 6 for a repeating one).
func digits(r *big.Rat) int {
	if r.IsInt() {
		return 0
	}
	for p := 1; p <= 34; p++ {
		s := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)))
		if s.IsInt() {
			return p
		}
	}
	return 6
}
