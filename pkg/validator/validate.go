package validator

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Failure is one rule a document breaks, in the spirit of MongoDB 5.0's
// errInfo: where, which rule, and the value found.
type Failure struct {
	// Path is the dotted path of the offending value ("items.0.qty"); ""
	// is the document itself.
	Path string `json:"path"`
	// Rule is the schema keyword that failed (required, bsonType,
	// minimum, additionalProperties, anyOf, ...).
	Rule string `json:"rule"`
	// Found is the value as relaxed Extended JSON (shortened), empty for
	// a missing field.
	Found string `json:"found,omitempty"`
	// Message says what the rule wants.
	Message string `json:"message"`
}

func (f Failure) String() string {
	p := f.Path
	if p == "" {
		p = "(document)"
	}
	s := p + ": " + f.Rule + ": " + f.Message
	if f.Found != "" {
		s += ", found " + f.Found
	}
	return s
}

// Validate checks a document against the schema with MongoDB's semantics
// and returns every failure (nil when the document is valid). A malformed
// document is one failure with rule "bson".
func (s *Schema) Validate(doc bson.Raw) []Failure {
	if err := bsoncore.Document(doc).Validate(); err != nil {
		return []Failure{{Rule: "bson", Message: "malformed BSON: " + err.Error()}}
	}
	v := &validation{}
	v.check(s.root, bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}, "")
	return v.failures
}

// ValidateD is [Schema.Validate] for a bson.D.
func (s *Schema) ValidateD(doc bson.D) []Failure {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return []Failure{{Rule: "bson", Message: "cannot encode document: " + err.Error()}}
	}
	return s.Validate(raw)
}

type validation struct {
	failures []Failure
}

func (v *validation) fail(path, rule, msg string, found *bsoncore.Value) {
	f := Failure{Path: path, Rule: rule, Message: msg}
	if found != nil {
		f.Found = show(*found)
	}
	v.failures = append(v.failures, f)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// check validates val at path against n, appending failures.
func (v *validation) check(n *node, val bsoncore.Value, path string) {
	if n.types != 0 && n.types&bit(val.Type) == 0 {
		v.fail(path, n.typeRule, "must be "+orList(n.typeNames), &val)
		return // MongoDB reports the type and does not descend
	}
	switch val.Type {
	case bsoncore.TypeEmbeddedDocument:
		v.object(n, val.Document(), path)
	case bsoncore.TypeArray:
		v.array(n, val.Array(), path)
	case bsoncore.TypeString:
		s := val.StringValue()
		if n.minLength >= 0 && int64(utf8.RuneCountInString(s)) < n.minLength {
			v.fail(path, "minLength", fmt.Sprintf("must be at least %d characters long", n.minLength), &val)
		}
		if n.maxLength >= 0 && int64(utf8.RuneCountInString(s)) > n.maxLength {
			v.fail(path, "maxLength", fmt.Sprintf("must be at most %d characters long", n.maxLength), &val)
		}
		if n.pattern != nil && !n.pattern.MatchString(s) {
			v.fail(path, "pattern", fmt.Sprintf("must match /%s/", n.patternSrc), &val)
		}
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		v.number(n, val, path)
	}
	if len(n.enum) > 0 {
		ok := false
		for _, e := range n.enum {
			if equal(val, e) {
				ok = true
				break
			}
		}
		if !ok {
			v.fail(path, "enum", "must be one of "+enumList(n.enum), &val)
		}
	}
	for _, sub := range n.allOf {
		v.check(sub, val, path)
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, sub := range n.anyOf {
			if passes(sub, val, path) {
				matched = true
				break
			}
		}
		if !matched {
			v.fail(path, "anyOf", fmt.Sprintf("must match at least one of %d schemas", len(n.anyOf)), &val)
		}
	}
	if len(n.oneOf) > 0 {
		count := 0
		for _, sub := range n.oneOf {
			if passes(sub, val, path) {
				count++
			}
		}
		if count != 1 {
			v.fail(path, "oneOf", fmt.Sprintf("must match exactly one of %d schemas, matches %d", len(n.oneOf), count), &val)
		}
	}
	if n.not != nil && passes(n.not, val, path) {
		v.fail(path, "not", "must not match the schema under not", &val)
	}
}

func passes(n *node, val bsoncore.Value, path string) bool {
	sub := &validation{}
	sub.check(n, val, path)
	return len(sub.failures) == 0
}

func (v *validation) object(n *node, doc bsoncore.Document, path string) {
	elems, _ := doc.Elements()
	count := int64(len(elems))
	if n.minProps >= 0 && count < n.minProps {
		v.fail(path, "minProperties", fmt.Sprintf("must have at least %d fields, has %d", n.minProps, count), nil)
	}
	if n.maxProps >= 0 && count > n.maxProps {
		v.fail(path, "maxProperties", fmt.Sprintf("must have at most %d fields, has %d", n.maxProps, count), nil)
	}
	for _, req := range n.required {
		if _, err := doc.LookupErr(req); err != nil {
			v.fail(join(path, req), "required", "is required but missing", nil)
		}
	}
	for _, e := range elems {
		key := e.Key()
		val := e.Value()
		p := join(path, key)
		covered := false
		for _, pr := range n.properties {
			if pr.name == key {
				v.check(pr.schema, val, p)
				covered = true
			}
		}
		for _, pp := range n.patterns {
			if pp.re.MatchString(key) {
				v.check(pp.schema, val, p)
				covered = true
			}
		}
		if !covered {
			switch {
			case n.noAddl:
				v.fail(p, "additionalProperties", "is not allowed (additionalProperties: false)", &val)
			case n.addlProps != nil:
				v.check(n.addlProps, val, p)
			}
		}
		if fields, ok := n.depFields[key]; ok {
			for _, f := range fields {
				if _, err := doc.LookupErr(f); err != nil {
					v.fail(join(path, f), "dependencies", fmt.Sprintf("is required when %q is present", key), nil)
				}
			}
		}
		if s, ok := n.depSchemas[key]; ok {
			whole := bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}
			if !passes(s, whole, path) {
				v.fail(path, "dependencies", fmt.Sprintf("must match the schema required when %q is present", key), nil)
			}
		}
	}
}

func (v *validation) array(n *node, arr bsoncore.Array, path string) {
	vals, _ := arr.Values()
	count := int64(len(vals))
	if n.minItems >= 0 && count < n.minItems {
		v.fail(path, "minItems", fmt.Sprintf("must have at least %d items, has %d", n.minItems, count), nil)
	}
	if n.maxItems >= 0 && count > n.maxItems {
		v.fail(path, "maxItems", fmt.Sprintf("must have at most %d items, has %d", n.maxItems, count), nil)
	}
	for i, item := range vals {
		p := join(path, strconv.Itoa(i))
		switch {
		case n.items != nil:
			v.check(n.items, item, p)
		case n.itemList != nil && i < len(n.itemList):
			v.check(n.itemList[i], item, p)
		case n.itemList != nil && n.noAddlItems:
			v.fail(p, "additionalItems", fmt.Sprintf("is not allowed: at most %d items (additionalItems: false)", len(n.itemList)), &item)
		case n.itemList != nil && n.addlItems != nil:
			v.check(n.addlItems, item, p)
		}
	}
	if n.uniqueItems {
		for i := 1; i < len(vals); i++ {
			for j := 0; j < i; j++ {
				if equal(vals[i], vals[j]) {
					item := vals[i]
					v.fail(join(path, strconv.Itoa(i)), "uniqueItems", fmt.Sprintf("duplicates item %d (uniqueItems)", j), &item)
					i, j = len(vals), i // one report per array
				}
			}
		}
	}
}

func (v *validation) number(n *node, val bsoncore.Value, path string) {
	f := asFloat(val)
	if n.minimum != nil {
		if f < *n.minimum || n.exclusiveMin && f == *n.minimum {
			op := ">="
			if n.exclusiveMin {
				op = ">"
			}
			v.fail(path, "minimum", fmt.Sprintf("must be %s %v", op, *n.minimum), &val)
		}
	}
	if n.maximum != nil {
		if f > *n.maximum || n.exclMax && f == *n.maximum {
			op := "<="
			if n.exclMax {
				op = "<"
			}
			v.fail(path, "maximum", fmt.Sprintf("must be %s %v", op, *n.maximum), &val)
		}
	}
	if n.multipleOf != nil && *n.multipleOf > 0 {
		q := f / *n.multipleOf
		if math.IsInf(q, 0) || math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			v.fail(path, "multipleOf", fmt.Sprintf("must be a multiple of %v", *n.multipleOf), &val)
		}
	}
}

// asFloat converts any BSON number (decimal included) to float64.
func asFloat(val bsoncore.Value) float64 {
	switch val.Type {
	case bsoncore.TypeInt32:
		return float64(val.Int32())
	case bsoncore.TypeInt64:
		return float64(val.Int64())
	case bsoncore.TypeDouble:
		return val.Double()
	case bsoncore.TypeDecimal128:
		h, l := val.Decimal128()
		f, _, err := big.ParseFloat(bson.NewDecimal128(h, l).String(), 10, 64, big.ToNearestEven)
		if err != nil {
			return math.NaN()
		}
		x, _ := f.Float64()
		return x
	}
	return math.NaN()
}

// equal compares two BSON values as MongoDB does for enum and uniqueItems:
// numbers by value across types; documents field by field, in order;
// arrays element by element; other values by type and bytes.
func equal(a, b bsoncore.Value) bool {
	if numberTypes&bit(a.Type) != 0 && numberTypes&bit(b.Type) != 0 {
		if a.Type == b.Type && a.Type != bsoncore.TypeDecimal128 && a.Type != bsoncore.TypeDouble {
			return bytes.Equal(a.Data, b.Data)
		}
		if a.Type == bsoncore.TypeInt64 && b.Type == bsoncore.TypeInt32 || a.Type == bsoncore.TypeInt32 && b.Type == bsoncore.TypeInt64 {
			return a.AsInt64() == b.AsInt64()
		}
		return asFloat(a) == asFloat(b)
	}
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
		ea, errA := bsoncore.Document(a.Data).Elements()
		eb, errB := bsoncore.Document(b.Data).Elements()
		if errA != nil || errB != nil || len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if a.Type == bsoncore.TypeEmbeddedDocument && ea[i].Key() != eb[i].Key() {
				return false
			}
			if !equal(ea[i].Value(), eb[i].Value()) {
				return false
			}
		}
		return true
	}
	return bytes.Equal(a.Data, b.Data)
}

// show renders a value as relaxed Extended JSON, shortened.
func show(val bsoncore.Value) string {
	s := val.String()
	rv := bson.RawValue{Type: bson.Type(val.Type), Value: val.Data}
	if b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: rv}}, false, false); err == nil {
		s = strings.TrimSuffix(strings.TrimPrefix(string(b), `{"v":`), "}")
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return "one of " + strings.Join(names, ", ")
}

func enumList(vals []bsoncore.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = show(v)
	}
	s := "[" + strings.Join(parts, ", ") + "]"
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
