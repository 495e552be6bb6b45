package validator_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// Regression tests of $jsonSchema fidelity. Each case names the
// MongoDB source file that decides it; paths are relative to the
// mongodb/mongo repository.

type fidelityCase struct {
	name, schema, doc string
	want              []string // "path rule" of each failure; nil: valid
	source            string   // the MongoDB file the rule follows
}

func runFidelity(t *testing.T, cases []fidelityCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.source == "" {
				t.Fatal("every case cites the MongoDB source it follows")
			}
			s, err := validator.Compile(mustExt(t, tc.schema))
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var got []string
			for _, f := range s.ValidateD(mustExt(t, tc.doc)) {
				got = append(got, f.Path+" "+f.Rule)
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("failures %q, want %q (per %s)", got, want, tc.source)
			}
		})
	}
}

const (
	srcUniqueItemsTest = "src/mongo/db/matcher/schema/expression_internal_schema_unique_items_test.cpp"
	srcUniqueItems     = "src/mongo/db/matcher/schema/expression_internal_schema_unique_items.h"
	srcEq              = "src/mongo/db/matcher/schema/expression_internal_schema_eq.h"
	srcCompareElements = "src/mongo/bson/bsonelement.cpp (compareElements)"
	srcCompareNumbers  = "src/mongo/base/compare_numbers.h"
	srcNestedOrder     = "src/mongo/bson/bson_comparator_interface_base.h (kIgnoreFieldOrder remains set for nested objects)"
	srcCanonicalTypes  = "src/mongo/bson/bsontypes.h (canonicalizeBSONType)"
	srcParser          = "src/mongo/db/matcher/schema/json_schema_parser.cpp"
	srcLeaf            = "src/mongo/db/matcher/expression_leaf.cpp (NaN in comparisons)"
	srcFmod            = "src/mongo/db/matcher/schema/expression_internal_schema_fmod.cpp"
)

// TestUniqueItemsFirstDuplicateNotLast is cause 1: a duplicate that is not
// the last item used to panic (index out of range). MongoDB reports the
// first item equal to an earlier one (FindsFirstDuplicateValue).
func TestUniqueItemsFirstDuplicateNotLast(t *testing.T) {
	const u = `{"properties": {"a": {"uniqueItems": true}}}`
	runFidelity(t, []fidelityCase{
		{"1 1 2", u, `{"a": [1, 1, 2]}`, []string{"a.1 uniqueItems"}, srcUniqueItemsTest},
		{"1 2 2 1", u, `{"a": [1, 2, 2, 1]}`, []string{"a.2 uniqueItems"}, srcUniqueItemsTest},
		{"1 1 1", u, `{"a": [1, 1, 1]}`, []string{"a.1 uniqueItems"}, srcUniqueItemsTest},
		{"x 1 1 y z", u, `{"a": ["x", 1, 1, "y", "z"]}`, []string{"a.2 uniqueItems"}, srcUniqueItemsTest},
	})
}

// TestEqualityLikeMongoDB is cause 2: enum and uniqueItems compare with
// UnorderedFieldsBSONElementComparator.
func TestEqualityLikeMongoDB(t *testing.T) {
	const u = `{"properties": {"a": {"uniqueItems": true}}}`
	enum := func(member string) string { return `{"properties": {"a": {"enum": [` + member + `]}}}` }
	runFidelity(t, []fidelityCase{
		// Field order is ignored, at every depth.
		{"enum ignores field order", enum(`{"name": "tiny", "size": "large"}`), `{"a": {"size": "large", "name": "tiny"}}`, nil, srcEq},
		{"uniqueItems ignores field order", u, `{"a": [{"x": "a", "y": [1, 2]}, {"y": [1, 2], "x": "a"}]}`, []string{"a.1 uniqueItems"}, srcUniqueItemsTest},
		{"nested documents ignore field order", enum(`{"p": {"x": 1, "y": 2}, "q": 3}`), `{"a": {"q": 3, "p": {"y": 2, "x": 1}}}`, nil, srcNestedOrder},
		{"documents in arrays ignore field order", enum(`[{"x": 1, "y": 2}]`), `{"a": [{"y": 2, "x": 1}]}`, nil, srcNestedOrder},
		{"field names count", u, `{"a": [{"x": 7}, {"y": 7}]}`, nil, srcUniqueItemsTest},
		{"an extra field differs", enum(`{"x": 1}`), `{"a": {"x": 1, "y": 2}}`, []string{"a enum"}, srcEq},
		// Arrays stay ordered, nested ones too.
		{"array order counts", u, `{"a": [[1, 2, 3], [1, 3, 2]]}`, nil, srcUniqueItemsTest},
		{"nested string arrays ordered", u, `{"a": [["a", "b"], ["b", "a"]]}`, nil, srcUniqueItemsTest},
		{"enum array order counts", enum(`[1, 2]`), `{"a": [2, 1]}`, []string{"a enum"}, srcCompareElements},
		{"equal arrays are duplicates", u, `{"a": [["bar"], ["bar"]]}`, []string{"a.1 uniqueItems"}, srcUniqueItemsTest},
		// Numbers compare by value across int, long, double and decimal.
		{"int long double decimal", u, `{"a": [1, {"$numberLong": "1"}]}`, []string{"a.1 uniqueItems"}, srcCompareElements},
		{"double equals decimal", u, `{"a": [{"$numberDouble": "2.5"}, {"$numberDecimal": "2.50"}]}`, []string{"a.1 uniqueItems"}, srcCompareNumbers},
		{"enum int equals double", enum(`{"$numberDouble": "1.0"}`), `{"a": {"$numberLong": "1"}}`, nil, srcCompareElements},
		{"numbers inside documents", enum(`{"q": 1}`), `{"a": {"q": {"$numberDecimal": "1.0"}}}`, nil, srcCompareElements},
		{"long beyond 2^53 is not rounded", enum(`{"$numberDouble": "9007199254740992"}`), `{"a": {"$numberLong": "9007199254740993"}}`, []string{"a enum"}, srcCompareNumbers},
		{"long equal to a double", enum(`{"$numberDouble": "9007199254740992"}`), `{"a": {"$numberLong": "9007199254740992"}}`, nil, srcCompareNumbers},
		{"decimal not rounded to a double", u, `{"a": [{"$numberDecimal": "0.1"}, 0.1]}`, nil, srcCompareNumbers},
		{"NaN equals NaN", u, `{"a": [{"$numberDouble": "NaN"}, {"$numberDouble": "NaN"}]}`, []string{"a.1 uniqueItems"}, srcCompareNumbers},
		{"decimal NaN equals double NaN", enum(`{"$numberDouble": "NaN"}`), `{"a": {"$numberDecimal": "NaN"}}`, nil, srcCompareNumbers},
		{"zero and negative zero", u, `{"a": [0, {"$numberDouble": "-0.0"}]}`, []string{"a.1 uniqueItems"}, srcCompareNumbers},
		// Types: string and symbol share a canonical type; null and
		// undefined do not; nothing else crosses types.
		{"string equals symbol", enum(`"x"`), `{"a": {"$symbol": "x"}}`, nil, srcCanonicalTypes},
		{"null is not undefined", enum(`null`), `{"a": {"$undefined": true}}`, []string{"a enum"}, srcEq},
		{"date is not timestamp", u, `{"a": [{"$date": 0}, {"$timestamp": {"t": 0, "i": 0}}]}`, nil, srcCanonicalTypes},
		{"1 is not true", u, `{"a": [1, true]}`, nil, srcCanonicalTypes},
		// Strings compare by bytes.
		{"case matters", u, `{"a": ["one", "OnE", "ONE"]}`, nil, srcUniqueItemsTest},
		{"mixed scalars unique", u, `{"a": [1, "bar", {}, [], null]}`, nil, srcUniqueItemsTest},
	})
}

// TestUniqueItemsLongArrays covers the hashed path (arrays longer than the
// pairwise limit), which must agree with the pairwise one.
func TestUniqueItemsLongArrays(t *testing.T) {
	items := func(last string) string {
		var parts []string
		for i := 0; i < 100; i++ {
			parts = append(parts, fmt.Sprintf(`{"k": %d, "v": "x"}`, i))
		}
		return `{"a": [` + strings.Join(append(parts, last), ", ") + `]}`
	}
	const u = `{"properties": {"a": {"uniqueItems": true}}}`
	runFidelity(t, []fidelityCase{
		{"distinct", u, items(`{"k": 100, "v": "x"}`), nil, srcUniqueItems},
		{"reordered duplicate", u, items(`{"v": "x", "k": {"$numberDouble": "57.0"}}`), []string{"a.100 uniqueItems"}, srcUniqueItems},
		{"NaN twice", u, items(`{"$numberDouble": "NaN"}, {"$numberDecimal": "NaN"}`), []string{"a.101 uniqueItems"}, srcCompareNumbers},
	})
}

// TestEmptyItemsTuple is cause 3: items: [] is an empty tuple; additionalItems
// then applies from index 0 (parseItems returns startIndexForAdditionalItems
// = 0). additionalItems without a tuple is ignored.
func TestEmptyItemsTuple(t *testing.T) {
	runFidelity(t, []fidelityCase{
		{"items [] alone accepts all", `{"properties": {"a": {"items": []}}}`, `{"a": [1, "x"]}`, nil, srcParser},
		{"items [] additionalItems false, empty", `{"properties": {"a": {"items": [], "additionalItems": false}}}`, `{"a": []}`, nil, srcParser},
		{"items [] additionalItems false", `{"properties": {"a": {"items": [], "additionalItems": false}}}`, `{"a": [1, 2]}`, []string{"a.0 additionalItems", "a.1 additionalItems"}, srcParser},
		{"items [] additionalItems schema", `{"properties": {"a": {"items": [], "additionalItems": {"bsonType": "int"}}}}`, `{"a": [1, "x"]}`, []string{"a.1 bsonType"}, srcParser},
		{"additionalItems without items ignored", `{"properties": {"a": {"additionalItems": false}}}`, `{"a": [1]}`, nil, srcParser},
		{"additionalItems with object items ignored", `{"properties": {"a": {"items": {"bsonType": "int"}, "additionalItems": false}}}`, `{"a": [1, 2]}`, nil, srcParser},
	})
}

// TestNumericBoundsLikeMongoDB: minimum and maximum compare exactly across
// types, and NaN satisfies no bound but a non-exclusive NaN one;
// multipleOf is an exact Decimal128 modulo.
func TestNumericBoundsLikeMongoDB(t *testing.T) {
	runFidelity(t, []fidelityCase{
		{"long minimum not rounded", `{"properties": {"n": {"minimum": {"$numberLong": "9007199254740993"}}}}`, `{"n": {"$numberLong": "9007199254740992"}}`, []string{"n minimum"}, srcCompareNumbers},
		{"long maximum not rounded", `{"properties": {"n": {"maximum": {"$numberDouble": "9007199254740992"}}}}`, `{"n": {"$numberLong": "9007199254740993"}}`, []string{"n maximum"}, srcCompareNumbers},
		{"decimal just above a double bound", `{"properties": {"n": {"maximum": 0.1}}}`, `{"n": {"$numberDecimal": "0.1000000000000000055511151231257828"}}`, []string{"n maximum"}, srcCompareNumbers},
		{"decimal bound accepted", `{"properties": {"n": {"minimum": {"$numberDecimal": "0.5"}}}}`, `{"n": 0.25}`, []string{"n minimum"}, srcParser},
		{"NaN fails minimum", `{"properties": {"n": {"minimum": 0}}}`, `{"n": {"$numberDouble": "NaN"}}`, []string{"n minimum"}, srcLeaf},
		{"NaN fails maximum", `{"properties": {"n": {"maximum": 10}}}`, `{"n": {"$numberDouble": "NaN"}}`, []string{"n maximum"}, srcLeaf},
		{"decimal NaN fails maximum", `{"properties": {"n": {"maximum": 10}}}`, `{"n": {"$numberDecimal": "NaN"}}`, []string{"n maximum"}, srcLeaf},
		{"infinity above maximum", `{"properties": {"n": {"maximum": 10}}}`, `{"n": {"$numberDouble": "Infinity"}}`, []string{"n maximum"}, srcCompareNumbers},
		{"multipleOf tiny remainder", `{"properties": {"n": {"multipleOf": 1}}}`, `{"n": 1e-10}`, []string{"n multipleOf"}, srcFmod},
		{"multipleOf NaN", `{"properties": {"n": {"multipleOf": 1}}}`, `{"n": {"$numberDouble": "NaN"}}`, []string{"n multipleOf"}, srcFmod},
		{"multipleOf infinity", `{"properties": {"n": {"multipleOf": 1}}}`, `{"n": {"$numberDouble": "Infinity"}}`, []string{"n multipleOf"}, srcFmod},
		{"multipleOf 0.1 of 0.3 (15 digits)", `{"properties": {"n": {"multipleOf": 0.1}}}`, `{"n": 0.3}`, nil, srcFmod},
		{"multipleOf decimal", `{"properties": {"n": {"multipleOf": {"$numberDecimal": "0.01"}}}}`, `{"n": {"$numberDecimal": "19.99"}}`, nil, srcFmod},
		{"multipleOf decimal missed", `{"properties": {"n": {"multipleOf": {"$numberDecimal": "0.01"}}}}`, `{"n": {"$numberDecimal": "19.995"}}`, []string{"n multipleOf"}, srcFmod},
		{"multipleOf big long", `{"properties": {"n": {"multipleOf": 3}}}`, `{"n": {"$numberLong": "9007199254740993"}}`, nil, srcFmod},
	})
}

// TestCompileLikeMongoDB: schemas MongoDB accepts or refuses, causes 3, 4
// and the dependencies messages.
func TestCompileLikeMongoDB(t *testing.T) {
	accepts := []struct{ name, schema, source string }{
		{"items empty tuple", `{"properties": {"a": {"items": []}}}`, srcParser},
		{"items empty tuple with additionalItems", `{"properties": {"a": {"items": [], "additionalItems": false}}}`, srcParser},
		{"dependencies annotations", `{"dependencies": {"title": "t", "description": "d", "a": ["b"]}}`, srcParser},
		{"decimal numeric keywords", `{"properties": {"n": {"minimum": {"$numberDecimal": "0.5"}, "maxLength": {"$numberDecimal": "3"}}}}`, srcParser},
	}
	for _, tc := range accepts {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := validator.Compile(mustExt(t, tc.schema)); err != nil {
				t.Errorf("rejected a schema MongoDB accepts (%s):\n%v", tc.source, err)
			}
		})
	}
	rejects := []struct{ name, schema, path, msg, source string }{
		{"NUL in required", `{"required": ["a\u0000b"]}`, "/required/0", "9867600", "src/mongo/db/field_ref_test.cpp (ConstructorRejectsEmbeddedNullChars)"},
		{"NUL in nested required", `{"properties": {"p": {"required": ["ok", "\u0000"]}}}`, "/properties/p/required/1", "NUL", "src/mongo/db/field_ref_test.cpp"},
		{"NUL in property dependency", `{"dependencies": {"a": ["b\u0000"]}}`, "/dependencies/a/0", "9867600", "src/mongo/db/field_ref_test.cpp"},
		{"empty dependency array", `{"dependencies": {"a": []}}`, "/dependencies/a", "cannot be an empty array", srcParser},
		{"duplicate in dependency array", `{"dependencies": {"a": ["b", "b"]}}`, "/dependencies/a/1", `contains "b" twice`, srcParser},
		{"non-string in dependency array", `{"dependencies": {"a": ["b", 1]}}`, "/dependencies/a/1", "field names (strings)", srcParser},
		{"dependency neither object nor array", `{"dependencies": {"a": "b"}}`, "/dependencies/a", "an object (a schema) or an array of field names", srcParser},
		{"enum duplicate ignoring field order", `{"enum": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}`, "/enum/1", "duplicate", srcParser},
		{"maxLength too large", `{"properties": {"s": {"maxLength": 1e300}}}`, "/properties/s/maxLength", "whole number below 2^63", "src/mongo/bson/bsonelement.cpp (parseIntegerElementToNonNegativeLong)"},
		{"minItems fractional decimal", `{"properties": {"s": {"minItems": {"$numberDecimal": "1.5"}}}}`, "/properties/s/minItems", "whole number", "src/mongo/bson/bsonelement.cpp (parseIntegerElementToNonNegativeLong)"},
		{"enum duplicate across numeric types", `{"enum": [1, {"$numberLong": "1"}]}`, "/enum/1", "duplicate", srcParser},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validator.Compile(mustExt(t, tc.schema))
			var errs validator.SchemaErrors
			if !errors.As(err, &errs) {
				t.Fatalf("accepted a schema MongoDB refuses (%s): %v", tc.source, err)
			}
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Msg, tc.msg) {
					if strings.Contains(e.Msg, "expected object") {
						t.Errorf("message still says \"expected object\": %s", e.Msg)
					}
					return
				}
			}
			t.Errorf("no error at %q containing %q (%s); got:\n%v", tc.path, tc.msg, tc.source, err)
		})
	}
}

// TestValidateDoesNotAllocatePerField pins the allocation budget of the
// Validate100k benchmark's documents (at most 10 per document).
func TestValidateDoesNotAllocatePerField(t *testing.T) {
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(realisticSchema), false, &d); err != nil {
		t.Fatal(err)
	}
	s, err := validator.Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	docs := realisticDocs(8)
	_ = s.Validate(docs[0]) // warm the pool
	allocs := testing.AllocsPerRun(50, func() {
		for _, doc := range docs {
			if fs := s.Validate(doc); fs != nil {
				t.Fatal(fs)
			}
		}
	}) / float64(len(docs))
	t.Logf("%.2f allocations per document", allocs)
	if allocs > 10 {
		t.Errorf("%.1f allocations per document, want at most 10", allocs)
	}
}

// TestCompileRefusesSchemasMongoDBCannotReceive: MongoDB refuses any command
// nested past 200 levels (BSONDepth::kDefaultMaxAllowableDepth,
// src/mongo/bson/bson_depth.h, checked on every OP_MSG section by
// src/mongo/rpc/op_msg.cpp); the schema's root is the third level of
// collMod. A deep schema is refused with its pointer, before the meta-schema
// check (whose cost grows with the square of the depth: FuzzSchemaAndDocument
// found a 1,000-level anyOf chain taking 15 s).
func TestCompileRefusesSchemasMongoDBCannotReceive(t *testing.T) {
	chain := func(levels int) bson.D {
		d := bson.D{{Key: "bsonType", Value: "object"}}
		for i := 0; i < levels; i++ {
			d = bson.D{{Key: "anyOf", Value: bson.A{d}}}
		}
		return d
	}
	// Each anyOf level is two BSON levels (the array, the schema in it).
	if _, err := validator.Compile(chain(98)); err != nil {
		t.Fatalf("a schema 197 levels deep fits in MongoDB's limit: %v", err)
	}
	_, err := validator.Compile(chain(99))
	var errs validator.SchemaErrors
	if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Msg, "nests deeper than 198 levels") {
		t.Fatalf("want one depth error, got %v", err)
	}
	if want := strings.Repeat("/anyOf/0", 99); errs[0].Path != want {
		t.Errorf("path %q, want %q", errs[0].Path, want)
	}
	if _, err := validator.Compile(chain(1000)); err == nil {
		t.Fatal("a 1,000-level schema compiled")
	}
}
