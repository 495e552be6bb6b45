package validator_test

// corpus is schema/document cases with the outcome MongoDB documents for
// $jsonSchema (draft 4 semantics plus bsonType; keywords apply only to
// values of their type; properties constrain present fields only; numbers
// compare by value across types; strings count code points). Each rule
// follows MongoDB's source: src/mongo/db/matcher/schema/json_schema_parser.cpp
// translates every keyword into the match expressions of the same directory
// (enum: expression_internal_schema_eq.h, uniqueItems:
// expression_internal_schema_unique_items.h, minLength/maxLength:
// expression_internal_schema_str_length.cpp, multipleOf:
// expression_internal_schema_fmod.cpp, minimum/maximum: the comparison
// expressions of src/mongo/db/matcher/expression_leaf.cpp); numbers and
// documents compare as src/mongo/bson/bsonelement.cpp compareElements does. want lists
// "path rule" of each expected failure; empty means valid. The same cases
// run as $jsonSchema queries against MongoDB under MONGOMIG_TEST_URI.
var corpus = []struct {
	name, schema, doc string
	want              []string
}{
	// bsonType: every alias against matching and non-matching values.
	{"int accepts int32", `{"properties": {"v": {"bsonType": "int"}}}`, `{"v": 1}`, nil},
	{"int refuses long", `{"properties": {"v": {"bsonType": "int"}}}`, `{"v": {"$numberLong": "1"}}`, []string{"v bsonType"}},
	{"int refuses double", `{"properties": {"v": {"bsonType": "int"}}}`, `{"v": 1.5}`, []string{"v bsonType"}},
	{"int refuses whole double", `{"properties": {"v": {"bsonType": "int"}}}`, `{"v": {"$numberDouble": "2.0"}}`, []string{"v bsonType"}},
	{"long accepts int64", `{"properties": {"v": {"bsonType": "long"}}}`, `{"v": {"$numberLong": "9007199254740993"}}`, nil},
	{"long refuses int32", `{"properties": {"v": {"bsonType": "long"}}}`, `{"v": 5}`, []string{"v bsonType"}},
	{"double accepts double", `{"properties": {"v": {"bsonType": "double"}}}`, `{"v": 1.25}`, nil},
	{"double refuses decimal", `{"properties": {"v": {"bsonType": "double"}}}`, `{"v": {"$numberDecimal": "1.25"}}`, []string{"v bsonType"}},
	{"decimal accepts decimal", `{"properties": {"v": {"bsonType": "decimal"}}}`, `{"v": {"$numberDecimal": "19.99"}}`, nil},
	{"decimal refuses double", `{"properties": {"v": {"bsonType": "decimal"}}}`, `{"v": 19.99}`, []string{"v bsonType"}},
	{"number accepts int", `{"properties": {"v": {"bsonType": "number"}}}`, `{"v": 3}`, nil},
	{"number accepts long", `{"properties": {"v": {"bsonType": "number"}}}`, `{"v": {"$numberLong": "3"}}`, nil},
	{"number accepts double", `{"properties": {"v": {"bsonType": "number"}}}`, `{"v": 3.5}`, nil},
	{"number accepts decimal", `{"properties": {"v": {"bsonType": "number"}}}`, `{"v": {"$numberDecimal": "3"}}`, nil},
	{"number refuses numeric string", `{"properties": {"v": {"bsonType": "number"}}}`, `{"v": "3"}`, []string{"v bsonType"}},
	{"date accepts date", `{"properties": {"v": {"bsonType": "date"}}}`, `{"v": {"$date": "2024-01-31T00:00:00Z"}}`, nil},
	{"date refuses ISO string", `{"properties": {"v": {"bsonType": "date"}}}`, `{"v": "2024-01-31T00:00:00Z"}`, []string{"v bsonType"}},
	{"date refuses timestamp", `{"properties": {"v": {"bsonType": "date"}}}`, `{"v": {"$timestamp": {"t": 1, "i": 1}}}`, []string{"v bsonType"}},
	{"timestamp accepts timestamp", `{"properties": {"v": {"bsonType": "timestamp"}}}`, `{"v": {"$timestamp": {"t": 1700000000, "i": 1}}}`, nil},
	{"timestamp refuses date", `{"properties": {"v": {"bsonType": "timestamp"}}}`, `{"v": {"$date": "2024-01-31T00:00:00Z"}}`, []string{"v bsonType"}},
	{"objectId accepts oid", `{"properties": {"v": {"bsonType": "objectId"}}}`, `{"v": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}}`, nil},
	{"objectId refuses hex string", `{"properties": {"v": {"bsonType": "objectId"}}}`, `{"v": "64b7f0c2a1b2c3d4e5f60718"}`, []string{"v bsonType"}},
	{"binData accepts binary", `{"properties": {"v": {"bsonType": "binData"}}}`, `{"v": {"$binary": {"base64": "AQID", "subType": "00"}}}`, nil},
	{"binData accepts uuid", `{"properties": {"v": {"bsonType": "binData"}}}`, `{"v": {"$uuid": "3b241101-e2bb-4255-8caf-4136c566a962"}}`, nil},
	{"binData refuses string", `{"properties": {"v": {"bsonType": "binData"}}}`, `{"v": "AQID"}`, []string{"v bsonType"}},
	{"regex accepts regex", `{"properties": {"v": {"bsonType": "regex"}}}`, `{"v": {"$regularExpression": {"pattern": "^a", "options": "i"}}}`, nil},
	{"regex refuses string", `{"properties": {"v": {"bsonType": "regex"}}}`, `{"v": "^a"}`, []string{"v bsonType"}},
	{"null accepts null", `{"properties": {"v": {"bsonType": "null"}}}`, `{"v": null}`, nil},
	{"null refuses empty string", `{"properties": {"v": {"bsonType": "null"}}}`, `{"v": ""}`, []string{"v bsonType"}},
	{"bool accepts false", `{"properties": {"v": {"bsonType": "bool"}}}`, `{"v": false}`, nil},
	{"bool refuses 0", `{"properties": {"v": {"bsonType": "bool"}}}`, `{"v": 0}`, []string{"v bsonType"}},
	{"object accepts empty document", `{"properties": {"v": {"bsonType": "object"}}}`, `{"v": {}}`, nil},
	{"object refuses array", `{"properties": {"v": {"bsonType": "object"}}}`, `{"v": []}`, []string{"v bsonType"}},
	{"array accepts empty array", `{"properties": {"v": {"bsonType": "array"}}}`, `{"v": []}`, nil},
	{"array refuses document", `{"properties": {"v": {"bsonType": "array"}}}`, `{"v": {"0": 1}}`, []string{"v bsonType"}},
	{"string accepts empty", `{"properties": {"v": {"bsonType": "string"}}}`, `{"v": ""}`, nil},
	{"string refuses symbol-free number", `{"properties": {"v": {"bsonType": "string"}}}`, `{"v": 1}`, []string{"v bsonType"}},
	{"javascript accepts code", `{"properties": {"v": {"bsonType": "javascript"}}}`, `{"v": {"$code": "function(){}"}}`, nil},
	{"minKey accepts minKey", `{"properties": {"v": {"bsonType": "minKey"}}}`, `{"v": {"$minKey": 1}}`, nil},
	{"maxKey refuses minKey", `{"properties": {"v": {"bsonType": "maxKey"}}}`, `{"v": {"$minKey": 1}}`, []string{"v bsonType"}},
	{"type array accepts second", `{"properties": {"v": {"bsonType": ["string", "null"]}}}`, `{"v": null}`, nil},
	{"type array refuses other", `{"properties": {"v": {"bsonType": ["string", "null"]}}}`, `{"v": 1}`, []string{"v bsonType"}},
	{"int or long accepts long", `{"properties": {"v": {"bsonType": ["int", "long"]}}}`, `{"v": {"$numberLong": "7"}}`, nil},
	{"root bsonType object", `{"bsonType": "object"}`, `{"a": 1}`, nil},

	// type: JSON types.
	{"type number accepts int", `{"properties": {"v": {"type": "number"}}}`, `{"v": 1}`, nil},
	{"type number accepts decimal", `{"properties": {"v": {"type": "number"}}}`, `{"v": {"$numberDecimal": "1"}}`, nil},
	{"type number refuses string", `{"properties": {"v": {"type": "number"}}}`, `{"v": "1"}`, []string{"v type"}},
	{"type boolean", `{"properties": {"v": {"type": "boolean"}}}`, `{"v": true}`, nil},
	{"type boolean refuses int", `{"properties": {"v": {"type": "boolean"}}}`, `{"v": 1}`, []string{"v type"}},
	{"type object refuses date", `{"properties": {"v": {"type": "object"}}}`, `{"v": {"$date": "2024-01-31T00:00:00Z"}}`, []string{"v type"}},
	{"type string refuses objectId", `{"properties": {"v": {"type": "string"}}}`, `{"v": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}}`, []string{"v type"}},
	{"type array of names", `{"properties": {"v": {"type": ["array", "null"]}}}`, `{"v": [1]}`, nil},
	{"type null", `{"properties": {"v": {"type": "null"}}}`, `{"v": null}`, nil},

	// required and properties.
	{"required present", `{"required": ["a"]}`, `{"a": 1}`, nil},
	{"required missing", `{"required": ["a"]}`, `{"b": 1}`, []string{"a required"}},
	{"required null counts as present", `{"required": ["a"]}`, `{"a": null}`, nil},
	{"required two missing", `{"required": ["a", "b"]}`, `{}`, []string{"a required", "b required"}},
	{"nested required", `{"properties": {"c": {"bsonType": "object", "required": ["email"]}}}`, `{"c": {"phone": "1"}}`, []string{"c.email required"}},
	{"nested required, parent absent", `{"properties": {"c": {"bsonType": "object", "required": ["email"]}}}`, `{}`, nil},
	{"properties only constrain present fields", `{"properties": {"a": {"bsonType": "string"}}}`, `{"b": 1}`, nil},
	{"deep property path", `{"properties": {"a": {"properties": {"b": {"properties": {"c": {"bsonType": "int"}}}}}}}`, `{"a": {"b": {"c": "x"}}}`, []string{"a.b.c bsonType"}},
	{"properties ignore non-documents", `{"properties": {"a": {"properties": {"b": {"bsonType": "int"}}}}}`, `{"a": "text"}`, nil},
	{"required on non-document ignored", `{"properties": {"a": {"required": ["b"]}}}`, `{"a": 5}`, nil},

	// additionalProperties and patternProperties.
	{"additionalProperties false counts _id", `{"additionalProperties": false, "properties": {"a": {}}}`, `{"_id": 1, "a": 1}`, []string{"_id additionalProperties"}},
	{"additionalProperties false with _id listed", `{"additionalProperties": false, "properties": {"_id": {}, "a": {}}}`, `{"_id": 1, "a": 1}`, nil},
	{"additionalProperties false extra field", `{"additionalProperties": false, "properties": {"_id": {}, "a": {}}}`, `{"_id": 1, "a": 1, "b": 2}`, []string{"b additionalProperties"}},
	{"additionalProperties schema accepts", `{"properties": {"_id": {}}, "additionalProperties": {"bsonType": "string"}}`, `{"_id": 1, "x": "s"}`, nil},
	{"additionalProperties schema refuses", `{"properties": {"_id": {}}, "additionalProperties": {"bsonType": "string"}}`, `{"_id": 1, "x": 2}`, []string{"x bsonType"}},
	{"patternProperties match", `{"patternProperties": {"^n_": {"bsonType": "int"}}}`, `{"n_a": 1, "other": "x"}`, nil},
	{"patternProperties refuse", `{"patternProperties": {"^n_": {"bsonType": "int"}}}`, `{"n_a": "x"}`, []string{"n_a bsonType"}},
	{"patternProperties unanchored", `{"patternProperties": {"id": {"bsonType": "int"}}}`, `{"userid": "x"}`, []string{"userid bsonType"}},
	{"patternProperties cover additional", `{"properties": {"_id": {}}, "patternProperties": {"^x": {}}, "additionalProperties": false}`, `{"_id": 1, "xa": 1, "xb": 2}`, nil},
	{"patternProperties and properties both apply", `{"properties": {"n_a": {"minimum": 0}}, "patternProperties": {"^n_": {"maximum": 5}}}`, `{"n_a": 9}`, []string{"n_a maximum"}},
	{"nested additionalProperties", `{"properties": {"a": {"additionalProperties": false, "properties": {"x": {}}}}}`, `{"a": {"x": 1, "y": 2}}`, []string{"a.y additionalProperties"}},

	// enum.
	{"enum string in", `{"properties": {"s": {"enum": ["active", "suspended"]}}}`, `{"s": "active"}`, nil},
	{"enum string out", `{"properties": {"s": {"enum": ["active", "suspended"]}}}`, `{"s": "gone"}`, []string{"s enum"}},
	{"enum is case sensitive", `{"properties": {"s": {"enum": ["active"]}}}`, `{"s": "Active"}`, []string{"s enum"}},
	{"enum numbers across types", `{"properties": {"n": {"enum": [1, 2]}}}`, `{"n": {"$numberDouble": "1.0"}}`, nil},
	{"enum long equals int", `{"properties": {"n": {"enum": [1, 2]}}}`, `{"n": {"$numberLong": "2"}}`, nil},
	{"enum decimal equals int", `{"properties": {"n": {"enum": [1, 2]}}}`, `{"n": {"$numberDecimal": "2.0"}}`, nil},
	{"enum number refuses string", `{"properties": {"n": {"enum": [1, 2]}}}`, `{"n": "1"}`, []string{"n enum"}},
	{"enum with null", `{"properties": {"n": {"enum": ["a", null]}}}`, `{"n": null}`, nil},
	{"enum document exact", `{"properties": {"d": {"enum": [{"a": 1}]}}}`, `{"d": {"a": 1}}`, nil},
	{"enum document extra field", `{"properties": {"d": {"enum": [{"a": 1}]}}}`, `{"d": {"a": 1, "b": 2}}`, []string{"d enum"}},
	// enum compares with UnorderedFieldsBSONElementComparator
	// (src/mongo/db/matcher/schema/expression_internal_schema_eq.h): field
	// order does not matter, at any depth; array order does.
	{"enum document ignores field order", `{"properties": {"d": {"enum": [{"a": 1, "b": 2}]}}}`, `{"d": {"b": 2, "a": 1}}`, nil},
	{"enum array", `{"properties": {"d": {"enum": [[1, 2]]}}}`, `{"d": [1, 2]}`, nil},
	{"enum array order matters", `{"properties": {"d": {"enum": [[1, 2]]}}}`, `{"d": [2, 1]}`, []string{"d enum"}},
	{"enum at root", `{"enum": [{"_id": 1}]}`, `{"_id": 1}`, nil},
	{"enum with date", `{"properties": {"d": {"enum": [{"$date": "2024-01-01T00:00:00Z"}]}}}`, `{"d": {"$date": "2024-01-01T00:00:00Z"}}`, nil},

	// Numbers.
	{"minimum met", `{"properties": {"n": {"minimum": 0}}}`, `{"n": 0}`, nil},
	{"minimum missed", `{"properties": {"n": {"minimum": 0}}}`, `{"n": -1}`, []string{"n minimum"}},
	{"exclusive minimum", `{"properties": {"n": {"minimum": 0, "exclusiveMinimum": true}}}`, `{"n": 0}`, []string{"n minimum"}},
	{"exclusive minimum met", `{"properties": {"n": {"minimum": 0, "exclusiveMinimum": true}}}`, `{"n": 0.001}`, nil},
	{"maximum met", `{"properties": {"n": {"maximum": 10}}}`, `{"n": 10}`, nil},
	{"maximum missed by double", `{"properties": {"n": {"maximum": 10}}}`, `{"n": 10.5}`, []string{"n maximum"}},
	{"exclusive maximum", `{"properties": {"n": {"maximum": 10, "exclusiveMaximum": true}}}`, `{"n": {"$numberLong": "10"}}`, []string{"n maximum"}},
	{"minimum ignores strings", `{"properties": {"n": {"minimum": 5}}}`, `{"n": "abc"}`, nil},
	{"minimum ignores null", `{"properties": {"n": {"minimum": 5}}}`, `{"n": null}`, nil},
	{"decimal under maximum", `{"properties": {"p": {"maximum": 20}}}`, `{"p": {"$numberDecimal": "19.99"}}`, nil},
	{"decimal over maximum", `{"properties": {"p": {"maximum": 20}}}`, `{"p": {"$numberDecimal": "20.01"}}`, []string{"p maximum"}},
	{"long over maximum", `{"properties": {"p": {"maximum": 1000000}}}`, `{"p": {"$numberLong": "1000001"}}`, []string{"p maximum"}},
	{"double minimum fractional", `{"properties": {"p": {"minimum": 0.5}}}`, `{"p": 0.25}`, []string{"p minimum"}},
	{"multipleOf met", `{"properties": {"n": {"multipleOf": 5}}}`, `{"n": 10}`, nil},
	{"multipleOf missed", `{"properties": {"n": {"multipleOf": 5}}}`, `{"n": 12}`, []string{"n multipleOf"}},
	{"multipleOf fractional", `{"properties": {"n": {"multipleOf": 0.5}}}`, `{"n": 1.5}`, nil},
	{"multipleOf ignores strings", `{"properties": {"n": {"multipleOf": 5}}}`, `{"n": "12"}`, nil},

	// Strings.
	{"minLength met", `{"properties": {"s": {"minLength": 2}}}`, `{"s": "ab"}`, nil},
	{"minLength missed", `{"properties": {"s": {"minLength": 2}}}`, `{"s": "a"}`, []string{"s minLength"}},
	{"minLength counts code points", `{"properties": {"s": {"minLength": 2, "maxLength": 2}}}`, `{"s": "éé"}`, nil},
	{"maxLength counts code points", `{"properties": {"s": {"maxLength": 1}}}`, `{"s": "日本"}`, []string{"s maxLength"}},
	{"maxLength missed", `{"properties": {"s": {"maxLength": 3}}}`, `{"s": "abcd"}`, []string{"s maxLength"}},
	{"minLength ignores numbers", `{"properties": {"s": {"minLength": 5}}}`, `{"s": 1}`, nil},
	{"empty string fails minLength 1", `{"properties": {"s": {"bsonType": "string", "minLength": 1}}}`, `{"s": ""}`, []string{"s minLength"}},
	{"pattern anchored met", `{"properties": {"s": {"pattern": "^[a-z]+$"}}}`, `{"s": "abc"}`, nil},
	{"pattern anchored missed", `{"properties": {"s": {"pattern": "^[a-z]+$"}}}`, `{"s": "ab1"}`, []string{"s pattern"}},
	{"pattern is a search", `{"properties": {"s": {"pattern": "b"}}}`, `{"s": "abc"}`, nil},
	{"pattern email", `{"properties": {"e": {"pattern": "^[^@\\s]+@[^@\\s]+$"}}}`, `{"e": "no-at-sign"}`, []string{"e pattern"}},
	{"pattern ignores non-strings", `{"properties": {"e": {"pattern": "^x"}}}`, `{"e": 5}`, nil},

	// Arrays.
	{"items all match", `{"properties": {"a": {"items": {"bsonType": "int"}}}}`, `{"a": [1, 2]}`, nil},
	{"items one fails", `{"properties": {"a": {"items": {"bsonType": "int"}}}}`, `{"a": [1, "x", 3]}`, []string{"a.1 bsonType"}},
	{"items empty array", `{"properties": {"a": {"items": {"bsonType": "int"}}}}`, `{"a": []}`, nil},
	{"items ignores non-arrays", `{"properties": {"a": {"items": {"bsonType": "int"}}}}`, `{"a": "x"}`, nil},
	{"minItems missed", `{"properties": {"a": {"minItems": 1}}}`, `{"a": []}`, []string{"a minItems"}},
	{"maxItems missed", `{"properties": {"a": {"maxItems": 2}}}`, `{"a": [1, 2, 3]}`, []string{"a maxItems"}},
	{"uniqueItems met", `{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [1, 2, 3]}`, nil},
	{"uniqueItems duplicate", `{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [1, 2, 1]}`, []string{"a.2 uniqueItems"}},
	{"uniqueItems numbers by value", `{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [1, {"$numberDouble": "1.0"}]}`, []string{"a.1 uniqueItems"}},
	{"uniqueItems documents", `{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [{"x": 1}, {"x": 1}]}`, []string{"a.1 uniqueItems"}},
	{"uniqueItems distinct documents", `{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [{"x": 1}, {"x": 2}]}`, nil},
	{"uniqueItems false allows duplicates", `{"properties": {"a": {"uniqueItems": false}}}`, `{"a": [1, 1]}`, nil},
	{"tuple items", `{"properties": {"a": {"items": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"a": [1, "x"]}`, nil},
	{"tuple items mismatch", `{"properties": {"a": {"items": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"a": [1, 2]}`, []string{"a.1 bsonType"}},
	{"tuple items shorter array", `{"properties": {"a": {"items": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"a": [1]}`, nil},
	{"tuple extra allowed by default", `{"properties": {"a": {"items": [{"bsonType": "int"}]}}}`, `{"a": [1, "x", true]}`, nil},
	{"additionalItems false", `{"properties": {"a": {"items": [{"bsonType": "int"}], "additionalItems": false}}}`, `{"a": [1, 2]}`, []string{"a.1 additionalItems"}},
	{"additionalItems schema", `{"properties": {"a": {"items": [{"bsonType": "int"}], "additionalItems": {"bsonType": "string"}}}}`, `{"a": [1, "x", 3]}`, []string{"a.2 bsonType"}},
	{"items of documents", `{"properties": {"items": {"items": {"required": ["qty"], "properties": {"qty": {"minimum": 1}}}}}}`, `{"items": [{"qty": 1}, {"sku": "x"}, {"qty": 0}]}`, []string{"items.1.qty required", "items.2.qty minimum"}},

	// Dependencies.
	{"property dependency met", `{"dependencies": {"card": ["billing"]}}`, `{"card": 1, "billing": 2}`, nil},
	{"property dependency missed", `{"dependencies": {"card": ["billing"]}}`, `{"card": 1}`, []string{"billing dependencies"}},
	{"property dependency inactive", `{"dependencies": {"card": ["billing"]}}`, `{"billing": 2}`, nil},
	{"schema dependency met", `{"dependencies": {"card": {"required": ["billing"]}}}`, `{"card": 1, "billing": 2}`, nil},
	{"schema dependency missed", `{"dependencies": {"card": {"required": ["billing"]}}}`, `{"card": 1}`, []string{" dependencies"}},

	// Combinators.
	{"anyOf first", `{"properties": {"v": {"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"v": 1}`, nil},
	{"anyOf second", `{"properties": {"v": {"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"v": "x"}`, nil},
	{"anyOf none", `{"properties": {"v": {"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}]}}}`, `{"v": true}`, []string{"v anyOf"}},
	{"oneOf exactly one", `{"properties": {"v": {"oneOf": [{"minimum": 0}, {"maximum": -10}]}}}`, `{"v": 5}`, nil},
	{"oneOf both", `{"properties": {"v": {"oneOf": [{"minimum": 0}, {"maximum": 10}]}}}`, `{"v": 5}`, []string{"v oneOf"}},
	{"oneOf none", `{"properties": {"v": {"oneOf": [{"bsonType": "int"}, {"bsonType": "long"}]}}}`, `{"v": "x"}`, []string{"v oneOf"}},
	{"allOf all", `{"properties": {"v": {"allOf": [{"minimum": 0}, {"maximum": 10}]}}}`, `{"v": 5}`, nil},
	{"allOf one fails", `{"properties": {"v": {"allOf": [{"minimum": 0}, {"maximum": 10}]}}}`, `{"v": 11}`, []string{"v maximum"}},
	{"not matches", `{"properties": {"v": {"not": {"bsonType": "null"}}}}`, `{"v": null}`, []string{"v not"}},
	{"not does not match", `{"properties": {"v": {"not": {"bsonType": "null"}}}}`, `{"v": 1}`, nil},
	{"root anyOf of required", `{"anyOf": [{"required": ["email"]}, {"required": ["phone"]}]}`, `{"phone": "1"}`, nil},
	{"root anyOf of required none", `{"anyOf": [{"required": ["email"]}, {"required": ["phone"]}]}`, `{"name": "x"}`, []string{" anyOf"}},

	// Property counts include _id.
	{"minProperties counts _id", `{"minProperties": 2}`, `{"_id": 1}`, []string{" minProperties"}},
	{"minProperties met", `{"minProperties": 2}`, `{"_id": 1, "a": 1}`, nil},
	{"maxProperties missed", `{"maxProperties": 2}`, `{"_id": 1, "a": 1, "b": 1}`, []string{" maxProperties"}},
	{"nested maxProperties", `{"properties": {"m": {"maxProperties": 1}}}`, `{"m": {"a": 1, "b": 2}}`, []string{"m maxProperties"}},

	// Keywords that do not apply to the value's type are ignored; the type
	// check stops descent.
	{"type mismatch stops descent", `{"properties": {"c": {"bsonType": "object", "required": ["email"]}}}`, `{"c": "text"}`, []string{"c bsonType"}},
	{"empty schema accepts all", `{}`, `{"a": [1, {"b": null}]}`, nil},
	{"title and description are annotations", `{"title": "t", "description": "d", "properties": {"a": {"description": "x"}}}`, `{"a": 1}`, nil},

	// Realistic: the sample application's orders.
	{"order valid", orderSchema, `{"userId": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}, "status": "paid", "createdAt": {"$date": "2026-01-02T10:00:00Z"}, "items": [{"sku": "A", "name": "Mug", "price": 9.5, "qty": 2}]}`, nil},
	{"order with every fault", orderSchema, `{"userId": "u1", "status": "lost", "items": [{"sku": "A", "name": "Mug", "price": -1, "qty": 0, "gift": true}]}`,
		[]string{"createdAt required", "userId bsonType", "status enum", "items.0.price minimum", "items.0.qty minimum", "items.0.gift additionalProperties"}},
	{"order without items", orderSchema, `{"userId": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}, "status": "paid", "createdAt": {"$date": "2026-01-02T10:00:00Z"}, "items": []}`, []string{"items minItems"}},
	{"order price as decimal", orderSchema, `{"userId": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}, "status": "paid", "createdAt": {"$date": "2026-01-02T10:00:00Z"}, "items": [{"sku": "A", "name": "Mug", "price": {"$numberDecimal": "9.50"}, "qty": 1}]}`, nil},
	{"order qty as long", orderSchema, `{"userId": {"$oid": "64b7f0c2a1b2c3d4e5f60718"}, "status": "paid", "createdAt": {"$date": "2026-01-02T10:00:00Z"}, "items": [{"sku": "A", "name": "Mug", "price": 1, "qty": {"$numberLong": "1"}}]}`, []string{"items.0.qty bsonType"}},
}

const orderSchema = `{"bsonType": "object", "required": ["userId", "items", "status", "createdAt"], "properties": {
	"userId": {"bsonType": "objectId"}, "status": {"enum": ["pending", "paid", "shipped", "cancelled"]}, "createdAt": {"bsonType": "date"},
	"items": {"bsonType": "array", "minItems": 1, "items": {"bsonType": "object", "required": ["sku", "name", "price", "qty"], "additionalProperties": false,
		"properties": {"sku": {"bsonType": "string"}, "name": {"bsonType": "string"}, "price": {"bsonType": ["double", "decimal", "int", "long"], "minimum": 0}, "qty": {"bsonType": "int", "minimum": 1}}}}}}`
