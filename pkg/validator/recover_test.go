package validator

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestValidateRecoversNamingTheSchemaPath: a panic inside Validate (a bug of
// mongomig's, simulated by corrupting a compiled schema) becomes one failure
// with rule "internal" naming the schema's JSON pointer and the document
// path, instead of crashing the caller; the next call is unaffected.
func TestValidateRecoversNamingTheSchemaPath(t *testing.T) {
	schema := bson.D{{Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{
		{Key: "patternProperties", Value: bson.D{{Key: "^x", Value: bson.D{}}}},
	}}}}}
	s, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	healthy, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	s.root.properties[0].schema.patterns[0].re = nil // Match on a nil *Regexp panics

	fs := s.ValidateD(bson.D{{Key: "a", Value: bson.D{{Key: "xy", Value: 1}}}})
	if len(fs) != 1 || fs[0].Rule != RuleInternal {
		t.Fatalf("want one %q failure, got %v", RuleInternal, fs)
	}
	if fs[0].Path != "a.xy" || !strings.Contains(fs[0].Message, "$jsonSchema /properties/a ") {
		t.Errorf("the failure must name the document path and the schema pointer: %+v", fs[0])
	}
	for i := 0; i < 3; i++ {
		if fs := healthy.ValidateD(bson.D{{Key: "a", Value: bson.D{{Key: "xy", Value: 1}}}}); fs != nil {
			t.Fatalf("a later Validate saw state from the recovered one: %v", fs)
		}
	}
}
