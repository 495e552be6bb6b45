package validator

import (
	"fmt"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// object is a schema object with its key order kept, so problems are
// reported in document order.
type object struct {
	pairs []pair
}

type pair struct {
	key   string
	value any
}

func (o *object) has(key string) bool {
	for _, p := range o.pairs {
		if p.key == key {
			return true
		}
	}
	return false
}

// fromBSON converts a BSON value into the values the dialect walker and the
// meta-schema check understand: *object, []any, string, bool, nil, float64
// or int64 for numbers, and a string description for other BSON types.
func fromBSON(v any) any {
	switch t := v.(type) {
	case bson.D:
		o := &object{pairs: make([]pair, len(t))}
		for i, e := range t {
			o.pairs[i] = pair{e.Key, fromBSON(e.Value)}
		}
		return o
	case bson.M:
		o := &object{}
		for k, x := range t {
			o.pairs = append(o.pairs, pair{k, fromBSON(x)})
		}
		return o
	case bson.A:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = fromBSON(x)
		}
		return a
	case []any:
		return fromBSON(bson.A(t))
	case int32:
		return int64(t)
	case int:
		return int64(t)
	case int64, float64, string, bool, nil:
		return t
	}
	return bsonValue{v}
}

// bsonValue is a BSON value with no JSON counterpart (a date, an ObjectID),
// legal inside enum but not as a keyword's value.
type bsonValue struct{ v any }

// toJSON turns the converted tree into values encoding/json and the
// jsonschema library accept (maps and slices).
func toJSON(v any) any {
	switch t := v.(type) {
	case *object:
		m := make(map[string]any, len(t.pairs))
		for _, p := range t.pairs {
			m[p.key] = toJSON(p.value)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = toJSON(x)
		}
		return a
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			// JSON has no NaN: a stand-in any enum accepts (numeric
			// keywords refuse it, where a NaN bound is meaningless).
			return map[string]any{"$bson": strconv.FormatFloat(t, 'g', -1, 64)}
		}
		return t
	case bsonValue:
		// A decimal is a number to MongoDB's parser (BSONElement::isNumber)
		// wherever a keyword wants one; the meta-schema sees it as a double.
		if d, ok := t.v.(bson.Decimal128); ok {
			if f, err := strconv.ParseFloat(d.String(), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		}
		// Stands in for the value inside enum; the meta-schema allows any.
		return map[string]any{"$bson": fmt.Sprintf("%T", t.v)}
	}
	return v
}

func describe(v any) string {
	switch t := v.(type) {
	case *object:
		return "an object"
	case []any:
		if len(t) == 0 {
			return "an empty array"
		}
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", t)
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%v", t)
	case int64, float64:
		return fmt.Sprintf("the number %v", t)
	case bsonValue:
		return fmt.Sprintf("a %T", t.v)
	}
	return fmt.Sprintf("%T", v)
}
