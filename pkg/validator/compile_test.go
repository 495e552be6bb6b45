package validator_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// doc builds a bson.D from alternating keys and values.
func doc(kv ...any) bson.D {
	d := bson.D{}
	for i := 0; i+1 < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

func TestCompileAccepts(t *testing.T) {
	cases := map[string]bson.D{
		"every bsonType alias": doc("bsonType", "object", "properties", func() bson.D {
			d := bson.D{}
			for _, ty := range validator.BSONTypes {
				d = append(d, bson.E{Key: "f_" + ty, Value: doc("bsonType", ty)})
			}
			return d
		}()),
		"array of bsonTypes":    doc("bsonType", bson.A{"int", "long", "null"}),
		"json type array":       doc("type", bson.A{"string", "null"}),
		"draft 4 keywords":      doc("bsonType", "object", "title", "t", "description", "d", "required", bson.A{"a"}, "minProperties", 1, "maxProperties", int64(5), "additionalProperties", false, "patternProperties", doc("^x_", doc("bsonType", "string")), "dependencies", doc("a", bson.A{"b"}, "c", doc("required", bson.A{"d"}))),
		"numeric keywords":      doc("bsonType", "number", "minimum", 0, "maximum", 10.5, "exclusiveMinimum", true, "exclusiveMaximum", false, "multipleOf", 0.5),
		"string keywords":       doc("bsonType", "string", "minLength", 1, "maxLength", 5, "pattern", "^[a-z]+$"),
		"array keywords":        doc("bsonType", "array", "minItems", 1, "maxItems", 3, "uniqueItems", true, "items", bson.A{doc("bsonType", "int")}, "additionalItems", doc("bsonType", "string")),
		"combinators":           doc("anyOf", bson.A{doc("bsonType", "int"), doc("bsonType", "string")}, "allOf", bson.A{doc("minimum", 0)}, "oneOf", bson.A{doc("bsonType", "int")}, "not", doc("bsonType", "null")),
		"enum with BSON values": doc("enum", bson.A{bson.NewObjectID(), bson.DateTime(0), "x", nil, 1}),
		"encryption keywords":   doc("bsonType", "object", "properties", doc("ssn", doc("encrypt", doc("bsonType", "string", "algorithm", "AEAD_AES_256_CBC_HMAC_SHA_512-Deterministic")))),
	}
	for name, schema := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := validator.Compile(schema)
			if err != nil {
				t.Fatalf("rejected a schema MongoDB accepts:\n%v", err)
			}
			if len(s.Document()) != len(schema) {
				t.Errorf("Document() lost keys")
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	cases := []struct {
		name   string
		schema bson.D
		path   string
		msg    string
	}{
		{"$ref", doc("properties", doc("a", doc("$ref", "#/definitions/x"))), "/properties/a/$ref", "MongoDB does not support $ref"},
		{"$schema", doc("$schema", "http://json-schema.org/draft-04/schema#"), "/$schema", "MongoDB does not support $schema"},
		{"default", doc("properties", doc("status", doc("bsonType", "string", "default", "active"))), "/properties/status/default", "upgrade step `default:"},
		{"definitions", doc("definitions", doc("x", doc())), "/definitions", "does not support definitions"},
		{"format", doc("properties", doc("email", doc("type", "string", "format", "email"))), "/properties/email/format", "use pattern"},
		{"id", doc("id", "urn:x"), "/id", "does not support id"},
		{"type integer", doc("properties", doc("n", doc("type", "integer"))), "/properties/n/type", "bsonType: int"},
		{"type integer in array", doc("type", bson.A{"string", "integer"}), "/type/1", "does not support type: integer"},
		{"unknown keyword", doc("bsonType", "object", "requried", bson.A{"a"}), "/requried", `did you mean "required"?`},
		{"unknown bsonType", doc("bsonType", "integer"), "/bsonType", `unknown bsonType "integer"`},
		{"misspelt bsonType in array", doc("bsonType", bson.A{"int", "objectid"}), "/bsonType/1", `did you mean "objectId"?`},
		{"unknown json type", doc("type", "date"), "/type", `unknown type "date"`},
		{"type and bsonType", doc("type", "object", "bsonType", "object"), "", "both type and bsonType"},
		{"empty bsonType array", doc("bsonType", bson.A{}), "/bsonType", "at least one type"},
		{"bsonType not a string", doc("bsonType", 3), "/bsonType", "type name or an array"},
		{"empty required", doc("required", bson.A{}), "/required", "non-empty array"},
		{"required not strings", doc("required", bson.A{"a", 1}), "/required/1", "field names (strings)"},
		{"required duplicate", doc("required", bson.A{"a", "a"}), "/required/1", "listed twice"},
		{"empty enum", doc("enum", bson.A{}), "/enum", "non-empty array"},
		{"properties not an object", doc("properties", bson.A{"a"}), "/properties", "object of schemas"},
		{"subschema not an object", doc("properties", doc("a", "string")), "/properties/a", "a schema must be an object"},
		{"empty anyOf", doc("anyOf", bson.A{}), "/anyOf", "non-empty array of schemas"},
		{"bad item schema", doc("items", bson.A{doc("bsonType", "nope")}), "/items/0/bsonType", "unknown bsonType"},
		{"minimum is a string", doc("minimum", "5"), "/minimum", "expected number"},
		{"negative maxLength", doc("maxLength", -1), "/maxLength", "must be >= 0"},
		{"uniqueItems not bool", doc("uniqueItems", "yes"), "/uniqueItems", "expected boolean"},
		{"additionalProperties wrong type", doc("additionalProperties", "no"), "/additionalProperties", "a schema must be an object"},
		{"lookahead pattern", doc("pattern", "^(?!admin).*"), "/pattern", "cannot evaluate the regular expression"},
		{"bad patternProperties regex", doc("patternProperties", doc("([", doc())), "/patternProperties/([", "cannot evaluate"},
		{"deep unknown keyword", doc("properties", doc("a", doc("items", doc("properties", doc("b", doc("bsonTyp", "int")))))), "/properties/a/items/properties/b/bsonTyp", `did you mean "bsonType"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validator.Compile(tc.schema)
			var errs validator.SchemaErrors
			if !errors.As(err, &errs) {
				t.Fatalf("want SchemaErrors, got %v", err)
			}
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("no error at %q containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}

// TestCompileReportsAllInDocumentOrder: several problems, each reported
// once, in the order they appear in the schema.
func TestCompileReportsAllInDocumentOrder(t *testing.T) {
	schema := doc("bsonType", "object", "properties", doc(
		"a", doc("type", "integer"),
		"b", doc("minimum", "x"),
		"c", doc("format", "email"),
	))
	_, err := validator.Compile(schema)
	var errs validator.SchemaErrors
	if !errors.As(err, &errs) {
		t.Fatalf("want SchemaErrors, got %v", err)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := "/properties/a/type /properties/b/minimum /properties/c/format"
	if strings.Join(paths, " ") != want {
		t.Errorf("paths = %v, want %s", paths, want)
	}
}

func FuzzCompile(f *testing.F) {
	f.Add([]byte(`{"bsonType": "object", "required": ["a"], "properties": {"a": {"bsonType": ["int", "long"]}}}`))
	f.Add([]byte(`{"type": "integer", "$ref": "#", "items": [{"pattern": "(?!x)"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d bson.D
		if err := bson.UnmarshalExtJSON(data, false, &d); err != nil {
			return
		}
		s, err := validator.Compile(d)
		if (s == nil) == (err == nil) {
			t.Fatalf("want exactly one of schema and error: %v %v", s, err)
		}
		if s != nil {
			// Validating any document, the schema itself included, must not panic.
			_ = s.ValidateD(d)
			_ = s.ValidateD(bson.D{{Key: "a", Value: bson.A{1, "x", bson.D{{Key: "b", Value: nil}}}}, {Key: "n", Value: 2.5}})
		}
	})
}

// FuzzValidate feeds arbitrary bytes as a document to a realistic schema:
// never a panic, malformed BSON is one "bson" failure.
func FuzzValidate(f *testing.F) {
	var schema bson.D
	if err := bson.UnmarshalExtJSON([]byte(`{"bsonType": "object", "required": ["a"], "properties": {"a": {"bsonType": ["int", "string"], "minimum": 1, "maxLength": 3}, "b": {"items": {"enum": [1, "x", null]}, "uniqueItems": true}, "c": {"patternProperties": {"^x": {"type": "number"}}, "additionalProperties": false}}}`), false, &schema); err != nil {
		f.Fatal(err)
	}
	s, err := validator.Compile(schema)
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range []bson.D{{{Key: "a", Value: int32(2)}}, {{Key: "b", Value: bson.A{1, 1}}}, {{Key: "c", Value: bson.D{{Key: "xa", Value: "s"}}}}} {
		b, _ := bson.Marshal(d)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := s.Validate(data)
		if bson.Raw(data).Validate() != nil && (len(fs) != 1 || fs[0].Rule != "bson") {
			t.Fatalf("malformed BSON gave %v", fs)
		}
	})
}
