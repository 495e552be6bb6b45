package validator

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	// minimum, additionalProperties, anyOf, ...), "bson" for a malformed
	// document, or [RuleInternal].
	Rule string `json:"rule"`
	// Found is the value as relaxed Extended JSON (shortened), empty for
	// a missing field.
	Found string `json:"found,omitempty"`
	// Message says what the rule wants.
	Message string `json:"message"`
}

// RuleInternal is the Rule of the Failure [Schema.Validate] returns when
// mongomig itself could not evaluate the schema (a bug, never the
// document's fault): its Message names the schema's JSON pointer. The
// document is reported as failing rather than crashing the caller.
const RuleInternal = "internal"

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
func (s *Schema) Validate(doc bson.Raw) (failures []Failure) {
	if err := bsoncore.Document(doc).Validate(); err != nil {
		return []Failure{{Rule: "bson", Message: "malformed BSON: " + err.Error()}}
	}
	v := validations.Get().(*validation)
	defer func() {
		// The last line of defence: a bug in mongomig must not crash a
		// report, a backfill or the application's validate-on-write.
		if r := recover(); r != nil {
			failures = append(v.failures, v.internal(r))
			return // v is left to the garbage collector, state unknown
		}
		v.failures, v.nodes, v.doc = nil, nil, nil // keep no document alive in the pool
		v.segs = v.segs[:0]
		validations.Put(v)
	}()
	v.doc, v.nodes, v.node = doc, s.nodes, 0
	v.check(s.root, bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc})
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

// validation is the state of one Validate call, pooled so a valid document
// costs no allocation of its own.
type validation struct {
	failures []Failure
	doc      []byte // the document validated
	segs     []seg  // where in doc the value being checked is
	// node is the id of the (sub)schema being applied, for the internal
	// report (0: none): an index into nodes, not a pointer, so setting it
	// at every value costs no write barrier.
	node  int
	nodes []*node
	quiet int // > 0 inside anyOf, oneOf, not and schema dependencies
	probe int // failures counted while quiet
}

// seg is one component of a document path: an array index, or a field
// name as its offset and length in the document. It holds no pointer, so
// pushing one costs no write barrier while the garbage collector runs.
type seg struct {
	at, n int
	isIdx bool
}

// keySeg is the seg of key, a field name inside v.doc. Every value walked
// is a slice of v.doc (reslicing keeps the end of the backing array), so
// their capacities tell the offset.
func (v *validation) keySeg(key []byte) seg {
	return seg{at: cap(v.doc) - cap(key), n: len(key)}
}

var validations = sync.Pool{New: func() any { return &validation{segs: make([]seg, 0, 16)} }}

func (v *validation) internal(r any) Failure {
	where := "/"
	if v.node > 0 {
		where = pointer(v.nodes[v.node].path)
	}
	return Failure{Path: v.path(""), Rule: RuleInternal,
		Message: fmt.Sprintf("mongomig could not evaluate $jsonSchema %s on this value (%v); please report it with the schema", where, r)}
}

// fail records a failure of rule at the current path. msg is only called
// when the failure is reported (not inside anyOf, oneOf or not).
func (v *validation) fail(rule string, msg func() string, found *bsoncore.Value) {
	v.failAt("", rule, msg, found)
}

// failAt is fail for a field below the current path (a missing field).
func (v *validation) failAt(field, rule string, msg func() string, found *bsoncore.Value) {
	if v.quiet > 0 {
		v.probe++
		return
	}
	f := Failure{Path: v.path(field), Rule: rule, Message: msg()}
	if found != nil {
		f.Found = show(*found)
	}
	v.failures = append(v.failures, f)
}

func (v *validation) path(field string) string {
	var b strings.Builder
	for i, s := range v.segs {
		if i > 0 {
			b.WriteByte('.')
		}
		if s.isIdx {
			b.WriteString(strconv.Itoa(s.at))
		} else {
			b.Write(v.doc[s.at : s.at+s.n])
		}
	}
	if field != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(field)
	}
	return b.String()
}

// sub checks val against sub, a schema below n at the same path.
func (v *validation) sub(n, sub *node, val bsoncore.Value) {
	v.check(sub, val)
	v.node = n.id
}

// passes reports whether val matches sub, reporting nothing.
func (v *validation) passes(n, sub *node, val bsoncore.Value) bool {
	before := v.probe
	v.quiet++
	v.check(sub, val)
	v.quiet--
	v.node = n.id
	ok := v.probe == before
	v.probe = before
	return ok
}

// check validates val against n, appending failures.
func (v *validation) check(n *node, val bsoncore.Value) {
	v.node = n.id
	if n.types != 0 && n.types&bit(val.Type) == 0 {
		v.fail(n.typeRule, func() string { return "must be " + orList(n.typeNames) }, &val)
		return // MongoDB reports the type and does not descend
	}
	switch val.Type {
	case bsoncore.TypeEmbeddedDocument:
		v.object(n, val.Data)
	case bsoncore.TypeArray:
		v.array(n, val.Data)
	case bsoncore.TypeString:
		v.str(n, val)
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		v.number(n, val)
	}
	if len(n.enum) > 0 && !inEnum(n.enum, val) {
		v.fail("enum", func() string { return "must be one of " + enumList(n.enum) }, &val)
	}
	for _, s := range n.allOf {
		v.sub(n, s, val)
	}
	v.combinators(n, val)
}

func inEnum(enum []bsoncore.Value, val bsoncore.Value) bool {
	for _, e := range enum {
		if equal(val, e) {
			return true
		}
	}
	return false
}

func (v *validation) combinators(n *node, val bsoncore.Value) {
	if len(n.anyOf) > 0 {
		matched := false
		for _, s := range n.anyOf {
			if v.passes(n, s, val) {
				matched = true
				break
			}
		}
		if !matched {
			v.fail("anyOf", func() string { return fmt.Sprintf("must match at least one of %d schemas", len(n.anyOf)) }, &val)
		}
	}
	if len(n.oneOf) > 0 {
		count := 0
		for _, s := range n.oneOf {
			if v.passes(n, s, val) {
				count++
			}
		}
		if count != 1 {
			v.fail("oneOf", func() string {
				return fmt.Sprintf("must match exactly one of %d schemas, matches %d", len(n.oneOf), count)
			}, &val)
		}
	}
	if n.not != nil && v.passes(n, n.not, val) {
		v.fail("not", func() string { return "must not match the schema under not" }, &val)
	}
}

// str checks the string keywords. Lengths count code points, as
// $_internalSchemaMinLength and MaxLength do (str::lengthInUTF8CodePoints,
// src/mongo/db/matcher/schema/expression_internal_schema_str_length.cpp).
func (v *validation) str(n *node, val bsoncore.Value) {
	b := stringBytes(val)
	if n.minLength >= 0 || n.maxLength >= 0 {
		count := int64(utf8.RuneCount(b))
		if n.minLength >= 0 && count < n.minLength {
			v.fail("minLength", func() string { return fmt.Sprintf("must be at least %d characters long", n.minLength) }, &val)
		}
		if n.maxLength >= 0 && count > n.maxLength {
			v.fail("maxLength", func() string { return fmt.Sprintf("must be at most %d characters long", n.maxLength) }, &val)
		}
	}
	if n.pattern != nil && !n.pattern.Match(b) {
		v.fail("pattern", func() string { return fmt.Sprintf("must match /%s/", n.patternSrc) }, &val)
	}
}

// stringBytes returns a string value's bytes without copying them.
func stringBytes(val bsoncore.Value) []byte {
	if len(val.Data) < 5 {
		return nil
	}
	return val.Data[4 : len(val.Data)-1]
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
