package validator

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mongomig/mongomig/internal/suggest"
)

// BSONTypes are the type aliases bsonType accepts, as $type does.
var BSONTypes = []string{
	"double", "string", "object", "array", "binData", "undefined", "objectId",
	"bool", "date", "null", "regex", "dbPointer", "javascript", "symbol",
	"javascriptWithScope", "int", "timestamp", "long", "decimal", "minKey",
	"maxKey", "number",
}

// JSONTypes are the values type accepts in MongoDB ("integer" is not one).
var JSONTypes = []string{"object", "array", "number", "boolean", "string", "null"}

// Keywords MongoDB's $jsonSchema accepts.
var Keywords = []string{
	"additionalItems", "additionalProperties", "allOf", "anyOf", "bsonType",
	"dependencies", "description", "enum", "exclusiveMaximum",
	"exclusiveMinimum", "items", "maxItems", "maxLength", "maxProperties",
	"maximum", "minItems", "minLength", "minProperties", "minimum",
	"multipleOf", "not", "oneOf", "pattern", "patternProperties",
	"properties", "required", "title", "type", "uniqueItems",
	// Client-side field level encryption keywords: accepted by MongoDB,
	// opaque to mongomig.
	"encrypt", "encryptMetadata",
}

// omitted are the draft 4 keywords MongoDB refuses, with what to do instead.
var omitted = map[string]string{
	"$ref":        "MongoDB does not support $ref; write the subschema inline (YAML anchors &name / *name can repeat it)",
	"$schema":     "MongoDB does not support $schema; remove it (the dialect is always draft 4 plus bsonType)",
	"default":     "MongoDB does not support default in a validator; remove it, and fill missing fields with an upgrade step `default: {field: value}`",
	"definitions": "MongoDB does not support definitions; write subschemas inline (YAML anchors &name / *name can repeat them)",
	"format":      "MongoDB does not support format; use pattern with a regular expression, or bsonType: date for dates",
	"id":          "MongoDB does not support id; remove it",
}

// SchemaError is one problem in a schema.
type SchemaError struct {
	// Path is the RFC 6901 JSON pointer of the offending keyword or value,
	// relative to the schema root ("/properties/name/bsonType").
	Path string `json:"path"`
	// Msg says what is wrong and what to write instead.
	Msg string `json:"message"`
}

func (e *SchemaError) Error() string {
	p := e.Path
	if p == "" {
		p = "/"
	}
	return "$jsonSchema " + p + ": " + e.Msg
}

// SchemaErrors is every problem found in a schema, in document order.
type SchemaErrors []*SchemaError

func (l SchemaErrors) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap gives errors.As access to each [*SchemaError].
func (l SchemaErrors) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// dialect walks a schema (as plain Go values: map via ordered pairs) and
// reports everything MongoDB's dialect refuses.
type dialect struct {
	errs SchemaErrors
	// decided lists the paths where MongoDB's parser, not draft 4's
	// meta-schema, has the last word; meta-schema errors there are dropped
	// (items: [] is valid in MongoDB, dependencies and enum follow
	// json_schema_parser.cpp's rules).
	decided []string
	// longPattern: a pattern exceeds MaxPatternLength, so the meta-schema
	// check (which compiles every pattern) must not run.
	longPattern bool
}

// add records a problem. String arguments come from the schema: each is
// cut to one line of at most maxExcerpt characters, so no message echoes
// megabytes of a value.
func (d *dialect) add(path, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = excerpt(s)
		}
	}
	d.errs = append(d.errs, &SchemaError{Path: shownPointer(path), Msg: fmt.Sprintf(format, args...)})
}

// shownPointer is a JSON pointer safe to print: a segment (a key from the
// schema) longer than maxExcerpt characters, or holding a control
// character, is cut and Go-quoted. Such a pointer no longer resolves, and
// positions fall back to the parent's.
func shownPointer(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if excerpt(seg) != seg || strings.ContainsFunc(seg, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
			segs[i] = strconv.Quote(excerpt(strings.ReplaceAll(seg, "\n", " ")))
		}
	}
	return strings.Join(segs, "/")
}

func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// schema checks one (sub)schema at path.
func (d *dialect) schema(v any, path string) {
	obj, ok := v.(*object)
	if !ok {
		d.add(path, "a schema must be an object, found %s; write a mapping such as {bsonType: string}", describe(v))
		return
	}
	if obj.has("type") && obj.has("bsonType") {
		d.add(path, "MongoDB refuses a schema with both type and bsonType; keep bsonType")
	}
	for _, kv := range obj.pairs {
		kp := path + "/" + escape(kv.key)
		if reason, ok := omitted[kv.key]; ok {
			d.errs = append(d.errs, &SchemaError{Path: kp, Msg: reason}) // not a value: never cut
			continue
		}
		if !contains(Keywords, kv.key) {
			hint := closest(kv.key, Keywords)
			if hint == "" {
				hint = "; remove it (see the keywords MongoDB accepts in docs/file-format.md)"
			}
			d.add(kp, "unknown $jsonSchema keyword %q (MongoDB refuses it)%s", kv.key, hint)
			continue
		}
		d.keyword(kv.key, kv.value, kp)
	}
}

func (d *dialect) keyword(key string, v any, path string) {
	switch key {
	case "bsonType":
		d.typeNames(v, path, BSONTypes, "bsonType")
	case "type":
		d.typeNames(v, path, JSONTypes, "type")
	case "properties", "patternProperties":
		obj, ok := v.(*object)
		if !ok {
			d.add(path, "%s must be an object of schemas, found %s; write {field: {bsonType: ...}}", key, describe(v))
			return
		}
		for _, kv := range obj.pairs {
			if key == "patternProperties" {
				d.pattern(kv.key, path+"/"+escape(kv.key))
			}
			d.schema(kv.value, path+"/"+escape(kv.key))
		}
	case "additionalProperties", "additionalItems":
		if _, ok := v.(bool); !ok {
			d.schema(v, path)
		}
	case "items":
		if arr, ok := v.([]any); ok {
			// MongoDB accepts an empty tuple (parseItems in
			// src/mongo/db/matcher/schema/json_schema_parser.cpp); draft
			// 4's meta-schema wants one item at least.
			d.decided = append(d.decided, path)
			for i, item := range arr {
				d.schema(item, fmt.Sprintf("%s/%d", path, i))
			}
			return
		}
		d.schema(v, path)
	case "allOf", "anyOf", "oneOf":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			d.add(path, "%s must be a non-empty array of schemas, found %s; list at least one schema, or remove %s", key, describe(v), key)
			return
		}
		for i, item := range arr {
			d.schema(item, fmt.Sprintf("%s/%d", path, i))
		}
	case "not":
		d.schema(v, path)
	case "dependencies":
		d.dependencies(v, path)
	case "pattern":
		if s, ok := v.(string); ok {
			d.pattern(s, path)
		}
	case "enum":
		d.enum(v, path)
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		d.count(key, v, path)
	case "required":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			d.add(path, "required must be a non-empty array of field names, found %s; list the required fields, or remove required", describe(v))
			return
		}
		seen := map[string]bool{}
		for i, item := range arr {
			s, ok := item.(string)
			if !ok {
				d.add(fmt.Sprintf("%s/%d", path, i), "required lists field names (strings), found %s; quote it", describe(item))
				continue
			}
			if seen[s] {
				d.add(fmt.Sprintf("%s/%d", path, i), "field %q is listed twice in required (MongoDB refuses duplicates); remove one", s)
			}
			seen[s] = true
			d.fieldName(s, fmt.Sprintf("%s/%d", path, i))
		}
	}
	// Numeric and boolean keywords are checked by the draft 4 meta-schema.
}

func (d *dialect) typeNames(v any, path string, valid []string, key string) {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		if len(t) == 0 {
			d.add(path, "%s must name at least one type; write a type name such as string", key)
			return
		}
		names = t
	default:
		d.add(path, "%s must be a type name or an array of them, found %s; write e.g. %s: string", key, describe(v), key)
		return
	}
	seen := map[string]bool{}
	for i, n := range names {
		p := path
		if _, isArr := v.([]any); isArr {
			p = fmt.Sprintf("%s/%d", path, i)
		}
		s, ok := n.(string)
		switch {
		case !ok:
			d.add(p, "%s lists type names (strings), found %s; write e.g. [string, null]", key, describe(n))
		case key == "type" && s == "integer":
			d.add(p, "MongoDB does not support type: integer; use bsonType: int, or bsonType: [int, long] for any integer")
		case !contains(valid, s):
			hint := closest(s, valid)
			if hint == "" {
				hint = "; valid: " + strings.Join(valid, ", ")
			}
			d.add(p, "unknown %s %q%s", key, s, hint)
		case seen[s]:
			d.add(p, "%s lists %q twice; remove one", key, s)
		}
		seen[s] = true
	}
}

// MaxPatternLength is the longest regular expression MongoDB accepts, in
// bytes: RegexMatchExpression::kMaxPatternSize in
// src/mongo/db/matcher/expression_leaf.h ("Regular expression is too
// long"), which $jsonSchema's pattern compiles to. mongomig applies it to
// patternProperties keys too. Checking it first also bounds the cost of
// compiling (a 5 MB pattern took 937 MB).
const MaxPatternLength = 32764

// pattern checks that mongomig can evaluate a regular expression. MongoDB
// uses PCRE; mongomig validates documents client-side with Go's RE2, which
// lacks lookaround and backreferences.
func (d *dialect) pattern(s, path string) {
	if len(s) > MaxPatternLength {
		d.longPattern = true
		d.add(path, "regular expression is %d bytes long, more than MongoDB's limit of %d bytes; shorten it", len(s), MaxPatternLength)
		return
	}
	if _, err := regexp.Compile(s); err != nil {
		d.add(path, "mongomig cannot evaluate the regular expression %q (%v); rewrite it without lookaround or backreferences", s, unwrapRegexpErr(err))
	}
}

func unwrapRegexpErr(err error) string {
	msg := err.Error()
	return strings.TrimPrefix(msg, "error parsing regexp: ")
}

// maxExcerpt is how much of a value a message may quote.
const maxExcerpt = 80

func excerpt(s string) string {
	cut := false
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cut = s[:i], true
	}
	if utf8.RuneCountInString(s) > maxExcerpt {
		s, cut = string([]rune(s)[:maxExcerpt]), true
	}
	if cut {
		s += "..."
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closest returns `; did you mean "x"?` for a near miss, or "".
func closest(got string, known []string) string {
	if w, ok := suggest.Closest(got, known); ok {
		return fmt.Sprintf("; did you mean %q?", w)
	}
	return ""
}
