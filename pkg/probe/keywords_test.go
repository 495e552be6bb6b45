package probe

import (
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// TestKeywordCasesCoverMongoDB: the keyword probe tries every keyword
// MongoDB's $jsonSchema accepts (but the encryption ones) and every
// bsonType alias, and nothing else, so a keyword added to pkg/validator
// cannot go unprobed.
func TestKeywordCasesCoverMongoDB(t *testing.T) {
	for _, kw := range validator.Keywords {
		if _, ok := keywordSchemas[kw]; !ok && !slices.Contains(probeOnlyByMongoDB, kw) {
			t.Errorf("keyword %s has no probe", kw)
		}
	}
	for kw := range keywordSchemas {
		if !slices.Contains(validator.Keywords, kw) {
			t.Errorf("probe of %s, which is not a MongoDB keyword", kw)
		}
	}
	for _, ty := range validator.BSONTypes {
		if _, ok := typeValues[ty]; !ok {
			t.Errorf("bsonType %s has no value to probe it with", ty)
		}
	}
	if n := len(keywordCases()); n != len(validator.Keywords)-len(probeOnlyByMongoDB)+len(validator.BSONTypes) {
		t.Errorf("%d keyword cases", n)
	}
}

// TestKeywordCasesAreRight: each case's passing document satisfies its
// validator and its failing one violates it, by pkg/validator's evaluator
// (pinned against MongoDB's documented behaviour by its corpus), so a
// refusal the probe reports is the server's, never the probe's.
func TestKeywordCasesAreRight(t *testing.T) {
	for _, c := range keywordCases() {
		schema := bson.D{{Key: "properties", Value: bson.D{{Key: c.field, Value: c.schema}}}}
		s, err := validator.Compile(schema)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if f := s.ValidateD(bson.D{{Key: c.field, Value: c.pass}}); len(f) != 0 {
			t.Errorf("%s: the passing value %v fails: %v", c.name, c.pass, f)
		}
		if c.fail == nil {
			if c.name != "title" && c.name != "description" {
				t.Errorf("%s: no failing value", c.name)
			}
			continue
		}
		f := s.ValidateD(bson.D{{Key: c.field, Value: c.fail}})
		if len(f) == 0 {
			t.Errorf("%s: the failing value %v passes", c.name, c.fail)
		}
	}
}

func TestSchemaKeywordsAndRefused(t *testing.T) {
	schema, err := bson.Marshal(bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{"enum"}},
		{Key: "properties", Value: bson.D{
			// Field names are not keywords.
			{Key: "anyOf", Value: bson.D{{Key: "bsonType", Value: bson.A{"number", "null"}}}},
			{Key: "status", Value: bson.D{{Key: "enum", Value: bson.A{bson.D{{Key: "not", Value: 1}}}}}},
			{Key: "tags", Value: bson.D{{Key: "items", Value: bson.D{{Key: "oneOf", Value: bson.A{bson.D{{Key: "minLength", Value: 1}}}}}}}},
		}},
		{Key: "dependencies", Value: bson.D{{Key: "a", Value: bson.D{{Key: "minProperties", Value: 1}}}, {Key: "b", Value: bson.A{"c"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	SchemaKeywords(schema, func(kw, alias string) {
		if alias != "" {
			kw += "=" + alias
		}
		got = append(got, kw)
	})
	want := "bsonType bsonType=object required properties bsonType bsonType=number bsonType=null enum items oneOf minLength dependencies minProperties"
	if strings.Join(got, " ") != want {
		t.Errorf("keywords\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	ks := KeywordSupport{Known: true, Unsupported: []string{"anyOf", "dependencies", "enum", "not", "oneOf"}, UnsupportedTypes: []string{"minKey", "number"}}
	if r := ks.Refused(schema); strings.Join(r, ",") != "dependencies,enum,oneOf,bsonType: number" {
		t.Errorf("refused %q", r)
	}
	if r := (&KeywordSupport{Reason: "unknown"}).Refused(schema); r != nil {
		t.Errorf("unknown support refused %q", r)
	}
}
