package integrity

import (
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// lookup returns the value at a dotted path of doc, without traversing
// arrays (a numeric segment indexes one).
func lookup(doc bson.Raw, path string) (bson.RawValue, bool) {
	if path == "" {
		return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, true
	}
	v, err := doc.LookupErr(strings.Split(path, ".")...)
	return v, err == nil
}

// refValues are the values at path, MongoDB-style: an array met on the way
// applies the rest of the path to each element, and an array at the end
// contributes its elements. Nulls are left out: no reference.
func refValues(doc bson.Raw, path string) []bson.RawValue {
	var out []bson.RawValue
	var walk func(v bson.RawValue, segs []string, depth int)
	walk = func(v bson.RawValue, segs []string, depth int) {
		if depth > 4 {
			return
		}
		switch {
		case len(segs) == 0 && v.Type == bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, e := range vals {
				if e.Type != bson.TypeArray && e.Type != bson.TypeNull {
					out = append(out, e)
				}
			}
		case len(segs) == 0:
			if v.Type != bson.TypeNull && v.Type != bson.TypeUndefined {
				out = append(out, v)
			}
		case v.Type == bson.TypeEmbeddedDocument:
			if next, err := v.Document().LookupErr(segs[0]); err == nil {
				walk(next, segs[1:], depth)
			}
		case v.Type == bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, e := range vals {
				if e.Type == bson.TypeEmbeddedDocument {
					walk(e, segs, depth+1)
				}
			}
		}
	}
	walk(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, strings.Split(path, "."), 0)
	return out
}

// base is one place a copy's fields live: the document at the copy's
// base path, or one element of the array there.
type base struct {
	at  string   // the element's path ("classes.1"), "" for the top
	doc bson.Raw // the element
}

// bases are the places of doc at path: the top for "", the document at
// path, or each document of the array at path.
func bases(doc bson.Raw, path string) []base {
	v, ok := lookup(doc, path)
	switch {
	case path == "":
		return []base{{"", doc}}
	case !ok:
		return nil
	case v.Type == bson.TypeEmbeddedDocument:
		return []base{{path, v.Document()}}
	case v.Type == bson.TypeArray:
		vals, _ := v.Array().Values()
		var out []base
		for i, e := range vals {
			if e.Type == bson.TypeEmbeddedDocument {
				out = append(out, base{path + "." + strconv.Itoa(i), e.Document()})
			}
		}
		return out
	}
	return nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// key is a map key for a BSON value: its type and bytes.
func key(v bson.RawValue) string { return string(rune(v.Type)) + string(v.Value) }

// same is strict equality: the same type and bytes (a copy is a copy).
func same(a, b bson.RawValue) bool { return a.Type == b.Type && string(a.Value) == string(b.Value) }

// number is v as an exact rational, if it is a number.
func number(v bson.RawValue) (*big.Rat, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return new(big.Rat).SetInt64(int64(v.Int32())), true
	case bson.TypeInt64:
		return new(big.Rat).SetInt64(v.Int64()), true
	case bson.TypeDouble:
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(v.Double(), 'g', -1, 64))
		return r, ok
	case bson.TypeDecimal128:
		r, ok := new(big.Rat).SetString(v.Decimal128().String())
		return r, ok
	}
	return nil, false
}

// sameNumber: two numbers of any numeric types with one value (an
// aggregate stored as a long equals a count the server gives as an int).
func sameNumber(a, b bson.RawValue) bool {
	x, ok1 := number(a)
	y, ok2 := number(b)
	if ok1 && ok2 {
		return x.Cmp(y) == 0
	}
	return same(a, b)
}

// typeClass is a value's type for a snapshot: numbers are one class.
func typeClass(t bson.Type) string {
	switch t {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return "number"
	}
	return t.String()
}

// quote writes v as the reports quote data; "" for a missing value.
func quote(v bson.RawValue, ok bool) bsonx.ExtJSON {
	if !ok {
		return ""
	}
	return bsonx.ExtJSONOf(v)
}

// val is a RawValue as a value for a filter or an update.
func val(v bson.RawValue) any { return v }

// guard matches the value v exactly at path (missing when !ok): the same
// type and value, and not an array holding it. An array's guard is the
// plain equality here, made exact when it is sent (exactFilter).
func guard(path string, v bson.RawValue, ok bool) bson.E {
	switch {
	case !ok:
		return bson.E{Key: path, Value: bson.D{{Key: "$exists", Value: false}}}
	case v.Type == bson.TypeArray:
		return bson.E{Key: path, Value: bson.D{{Key: "$eq", Value: val(v)}}}
	case v.Type == bson.TypeEmbeddedDocument:
		return bson.E{Key: path, Value: bson.D{{Key: "$eq", Value: val(v)}, {Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}}}
	}
	return bson.E{Key: path, Value: bson.D{{Key: "$eq", Value: val(v)}, {Key: "$type", Value: int32(v.Type)}, {Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}}}
}
