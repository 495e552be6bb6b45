package validator

import (
	"fmt"
	"math"
	"strings"
)

// Checks where MongoDB's parser (src/mongo/db/matcher/schema/
// json_schema_parser.cpp) differs from draft 4's meta-schema; the paths
// they cover are in dialect.decided.

// dependencies follows parseDependencies: each entry is a schema (object)
// or a non-empty array of distinct field names; string values are allowed
// only under the annotation keys title and description.
func (d *dialect) dependencies(v any, path string) {
	obj, ok := v.(*object)
	if !ok {
		d.add(path, "dependencies must be an object, found %s; write {field: [other, fields]} or {field: {schema}}", describe(v))
		return
	}
	for _, kv := range obj.pairs {
		p := path + "/" + escape(kv.key)
		d.decided = append(d.decided, p)
		switch t := kv.value.(type) {
		case *object:
			d.schema(t, p)
		case []any:
			d.propertyDependency(kv.key, t, p)
		case string:
			if kv.key != "title" && kv.key != "description" {
				d.add(p, "dependencies of %q must be an object (a schema) or an array of field names, found %s; write %s: [other, fields]", kv.key, describe(t), kv.key)
			}
		default:
			d.add(p, "dependencies of %q must be an object (a schema) or an array of field names, found %s; write %s: [other, fields]", kv.key, describe(t), kv.key)
		}
	}
}

// propertyDependency follows translatePropertyDependency.
func (d *dialect) propertyDependency(key string, names []any, path string) {
	if len(names) == 0 {
		d.add(path, "dependencies of %q cannot be an empty array (MongoDB refuses it); list the fields %q requires, or remove the entry", key, key)
		return
	}
	seen := map[string]bool{}
	for i, n := range names {
		p := fmt.Sprintf("%s/%d", path, i)
		s, ok := n.(string)
		switch {
		case !ok:
			d.add(p, "dependencies of %q lists field names (strings), found %s; quote it", key, describe(n))
		case seen[s]:
			d.add(p, "dependencies of %q contains %q twice (MongoDB refuses duplicates); remove one", key, s)
		default:
			d.fieldName(s, p)
		}
		if ok {
			seen[s] = true
		}
	}
}

// fieldName refuses a field name MongoDB's path parser refuses: one with a
// NUL byte (FieldRef, code 9867600; src/mongo/db/field_ref.cpp and its
// tests ConstructorRejectsEmbeddedNullChars in field_ref_test.cpp). The
// names of required and of property dependencies become such paths
// (ExistsMatchExpression in translateRequired, makeDependencyExistsClause).
func (d *dialect) fieldName(s, path string) {
	if strings.IndexByte(s, 0) >= 0 {
		d.add(path, "field name %q contains a NUL byte, which MongoDB refuses (error 9867600); remove it", s)
	}
}

// enum follows parseEnum: a non-empty array without duplicates, duplicates
// judged by the same unordered-fields comparator validation uses (so
// {a: 1, b: 2} and {b: 2, a: 1} are duplicates, and so are 1 and 1.0).
func (d *dialect) enum(v any, path string) {
	d.decided = append(d.decided, path)
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		d.add(path, "enum must be a non-empty array, found %s; list the allowed values", describe(v))
		return
	}
	for i := 1; i < len(arr); i++ {
		vi := coreValue(arr[i])
		for j := 0; j < i; j++ {
			if equal(vi, coreValue(arr[j])) {
				d.add(fmt.Sprintf("%s/%d", path, i), "enum lists a duplicate of item %d (MongoDB refuses duplicates, comparing documents without regard to field order and numbers by value); remove one", j)
				break
			}
		}
	}
}

// decidedAt reports whether MongoDB's parser rules govern the value at
// path itself (the subschemas below it are still draft 4's).
func decidedAt(decided []string, path string) bool {
	for _, p := range decided {
		if path == p {
			return true
		}
	}
	return false
}

// count follows parseIntegerElementToNonNegativeLong
// (src/mongo/bson/bsonelement.cpp), which length and count keywords use: a
// whole number that a 64-bit integer holds. The meta-schema checks the type
// and the sign; it lets 1e300 through, which the conversion would lose.
func (d *dialect) count(key string, v any, path string) {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case bsonValue:
		r := asDecimal(coreValue(t))
		if r == nil {
			return // not a number: the meta-schema reports it
		}
		if !r.IsInt() || !r.Num().IsInt64() {
			d.decided = append(d.decided, path)
			d.add(path, "%s must be a whole number below 2^63 (MongoDB refuses %s); write a count such as 10", key, t.v)
		}
		return
	default:
		return
	}
	if f != math.Trunc(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		d.decided = append(d.decided, path)
		d.add(path, "%s must be a whole number below 2^63 (MongoDB refuses %v); write a count such as 10", key, f)
	}
}
