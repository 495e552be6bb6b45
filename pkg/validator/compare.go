package validator

import (
	"bytes"
	"math"
	"math/big"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Equality for enum and uniqueItems follows MongoDB's
// UnorderedFieldsBSONElementComparator (src/mongo/bson/
// unordered_fields_bsonelement_comparator.h), which both
// InternalSchemaEqMatchExpression (enum, schema/expression_internal_schema_eq.h)
// and InternalSchemaUniqueItemsMatchExpression
// (schema/expression_internal_schema_unique_items.h) use:
//
//   - values of different canonical types are never equal; numbers (int,
//     long, double, decimal) share one canonical type, so do string and
//     symbol, and undefined compares like a missing value, not like null
//     (canonicalizeBSONType in src/mongo/bson/bsontypes.h);
//   - numbers compare exactly by value across types, and NaN equals NaN
//     (src/mongo/base/compare_numbers.h);
//   - documents compare with their fields sorted by name, field names
//     included, at every depth (kIgnoreFieldOrder "will remain set for nested
//     objects", bson_comparator_interface_base.h; BSONObj::woCompare uses
//     BSONObjIteratorSorted, src/mongo/bson/bsonobj.cpp);
//   - arrays go through the same comparison, and since their field names are
//     their indexes, element order matters: [1, 2] != [2, 1]
//     (BSONElement::compareElements, src/mongo/bson/bsonelement.cpp);
//   - strings compare by bytes, never with a collation.

// canonical is MongoDB's canonicalizeBSONType.
func canonical(t bsoncore.Type) int {
	switch t {
	case bsoncore.TypeMinKey:
		return -1
	case bsoncore.TypeUndefined:
		return 0
	case bsoncore.TypeNull:
		return 5
	case bsoncore.TypeDouble, bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDecimal128:
		return 10
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		return 15
	case bsoncore.TypeEmbeddedDocument:
		return 20
	case bsoncore.TypeArray:
		return 25
	case bsoncore.TypeBinary:
		return 30
	case bsoncore.TypeObjectID:
		return 35
	case bsoncore.TypeBoolean:
		return 40
	case bsoncore.TypeDateTime:
		return 45
	case bsoncore.TypeTimestamp:
		return 47
	case bsoncore.TypeRegex:
		return 50
	case bsoncore.TypeDBPointer:
		return 55
	case bsoncore.TypeJavaScript:
		return 60
	case bsoncore.TypeCodeWithScope:
		return 65
	case bsoncore.TypeMaxKey:
		return 127
	}
	return -100
}

// equal reports whether MongoDB's unordered-fields comparator finds a and b
// equal.
func equal(a, b bsoncore.Value) bool {
	ca := canonical(a.Type)
	if ca != canonical(b.Type) {
		return false
	}
	switch ca {
	case -1, 0, 5, 127:
		return true
	case 10:
		return compareNumbers(a, b) == 0
	case 20, 25:
		return docsEqual(a.Data, b.Data)
	case 65:
		codeA, scopeA, okA := a.CodeWithScopeOK()
		codeB, scopeB, okB := b.CodeWithScopeOK()
		return okA && okB && codeA == codeB && docsEqual(scopeA, scopeB)
	}
	// Strings and symbols share a layout (length, bytes, NUL); the other
	// types compare by their bytes (booleans, dates, timestamps, ObjectIds,
	// binary with its subtype, regex with its flags, code, DBPointer).
	return bytes.Equal(a.Data, b.Data)
}

// docsEqual compares two documents (or arrays) ignoring field order. Most
// pairs have their fields in the same order: that path allocates nothing.
func docsEqual(a, b []byte) bool {
	ra, okA := elementsOf(a)
	rb, okB := elementsOf(b)
	if !okA || !okB {
		return false
	}
	sameOrder := true
	n := 0
	for x, y := ra, rb; ; n++ {
		ea, restA, moreA := bsoncore.ReadElement(x)
		eb, restB, moreB := bsoncore.ReadElement(y)
		if !moreA || !moreB {
			if moreA != moreB {
				return false // different field counts
			}
			break
		}
		if !bytes.Equal(ea.KeyBytes(), eb.KeyBytes()) {
			sameOrder = false
		}
		x, y = restA, restB
	}
	if sameOrder {
		for x, y := ra, rb; ; {
			ea, restA, ok := bsoncore.ReadElement(x)
			if !ok {
				return true
			}
			eb, restB, _ := bsoncore.ReadElement(y)
			if !equal(ea.Value(), eb.Value()) {
				return false
			}
			x, y = restA, restB
		}
	}
	sa, sb := sortedElements(ra, n), sortedElements(rb, n)
	for i := range sa {
		if !bytes.Equal(sa[i].KeyBytes(), sb[i].KeyBytes()) || !equal(sa[i].Value(), sb[i].Value()) {
			return false
		}
	}
	return true
}

// elementsOf returns the element bytes of a document: without its length
// prefix and final NUL.
func elementsOf(doc []byte) ([]byte, bool) {
	if len(doc) < 5 {
		return nil, false
	}
	return doc[4 : len(doc)-1], true
}

func sortedElements(elems []byte, n int) []bsoncore.Element {
	out := make([]bsoncore.Element, 0, n)
	for {
		e, rest, ok := bsoncore.ReadElement(elems)
		if !ok {
			break
		}
		out = append(out, e)
		elems = rest
	}
	slices.SortStableFunc(out, func(x, y bsoncore.Element) int { return bytes.Compare(x.KeyBytes(), y.KeyBytes()) })
	return out
}

// compareNumbers orders two BSON numbers exactly, as MongoDB does
// (src/mongo/base/compare_numbers.h): NaN equals NaN and is below every other
// number; a long and a double compare without rounding the long; a decimal
// compares exactly with any other number.
func compareNumbers(a, b bsoncore.Value) int {
	nanA, nanB := isNaN(a), isNaN(b)
	if nanA || nanB {
		switch {
		case nanA && nanB:
			return 0
		case nanA:
			return -1
		}
		return 1
	}
	ia, intA := integer(a)
	ib, intB := integer(b)
	if intA && intB {
		return cmp3(ia, ib)
	}
	if a.Type != bsoncore.TypeDecimal128 && b.Type != bsoncore.TypeDecimal128 {
		switch {
		case intA:
			return compareLongToDouble(ia, b.Double())
		case intB:
			return -compareLongToDouble(ib, a.Double())
		}
		return cmp3(a.Double(), b.Double())
	}
	if infA, infB := infSign(a), infSign(b); infA != 0 || infB != 0 {
		return cmp3(infA, infB)
	}
	return exact(a).Cmp(exact(b))
}

// compareLongToDouble is MongoDB's function of the same name: longs beyond
// 2^53 are not rounded to a double before comparing.
func compareLongToDouble(l int64, d float64) int {
	const precise = 1 << 53
	if l <= precise && l >= -precise {
		return cmp3(float64(l), d)
	}
	const bound = 9223372036854775808.0 // 2^63
	switch {
	case d >= bound:
		return -1
	case d < -bound:
		return 1
	}
	return cmp3(l, int64(d))
}

func cmp3[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func integer(v bsoncore.Value) (int64, bool) {
	switch v.Type {
	case bsoncore.TypeInt32:
		return int64(v.Int32()), true
	case bsoncore.TypeInt64:
		return v.Int64(), true
	}
	return 0, false
}

func decimalOf(v bsoncore.Value) bson.Decimal128 {
	h, l := v.Decimal128()
	return bson.NewDecimal128(h, l)
}

func isNaN(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeDouble:
		return math.IsNaN(v.Double())
	case bsoncore.TypeDecimal128:
		return decimalOf(v).IsNaN()
	}
	return false
}

func infSign(v bsoncore.Value) int {
	switch v.Type {
	case bsoncore.TypeDouble:
		f := v.Double()
		if math.IsInf(f, 1) {
			return 1
		}
		if math.IsInf(f, -1) {
			return -1
		}
	case bsoncore.TypeDecimal128:
		return decimalOf(v).IsInf()
	}
	return 0
}

// exact returns a finite number as an exact rational.
func exact(v bsoncore.Value) *big.Rat {
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64:
		i, _ := integer(v)
		return new(big.Rat).SetInt64(i)
	case bsoncore.TypeDouble:
		return new(big.Rat).SetFloat64(v.Double())
	case bsoncore.TypeDecimal128:
		return decimalRat(decimalOf(v))
	}
	return new(big.Rat)
}

func decimalRat(d bson.Decimal128) *big.Rat {
	bi, exp, err := d.BigInt()
	if err != nil {
		return new(big.Rat)
	}
	r := new(big.Rat).SetInt(bi)
	if exp == 0 {
		return r
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp > 0 {
		return r.Mul(r, new(big.Rat).SetInt(p))
	}
	return r.Quo(r, new(big.Rat).SetInt(p))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
