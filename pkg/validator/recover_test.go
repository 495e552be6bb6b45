package validator

import (
	"reflect"
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
	s.root.properties[0].schema.patterns[0].re = nil // Match on a nil *pattern panics

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

// TestEveryNodeHasItsID: the internal report finds the (sub)schema being
// applied by id, so every node of a compiled schema, of every kind of
// subschema (found here by reflection, not by number's own walk), must
// have the id that indexes it.
func TestEveryNodeHasItsID(t *testing.T) {
	sub := func(k string) bson.D { return bson.D{{Key: "title", Value: k}} }
	s, err := Compile(bson.D{
		{Key: "properties", Value: bson.D{{Key: "p", Value: sub("p")}}},
		{Key: "patternProperties", Value: bson.D{{Key: "^x", Value: sub("x")}}},
		{Key: "additionalProperties", Value: sub("ap")},
		{Key: "dependencies", Value: bson.D{{Key: "d", Value: sub("d")}}},
		{Key: "allOf", Value: bson.A{sub("all")}}, {Key: "anyOf", Value: bson.A{sub("any")}},
		{Key: "oneOf", Value: bson.A{sub("one")}}, {Key: "not", Value: sub("not")},
		{Key: "properties", Value: bson.D{{Key: "t", Value: bson.D{{Key: "items", Value: bson.A{sub("i0")}}, {Key: "additionalItems", Value: sub("ai")}}}}},
		{Key: "properties", Value: bson.D{{Key: "u", Value: bson.D{{Key: "items", Value: sub("items")}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	nodeType := reflect.TypeOf(&node{})
	seen := 0
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch {
		case v.Type() == nodeType:
			if v.IsNil() {
				return
			}
			n := (*node)(v.UnsafePointer())
			if n.id <= 0 || n.id >= len(s.nodes) || s.nodes[n.id] != n {
				t.Errorf("node %s has id %d", n.path, n.id)
			}
			seen++
			walk(v.Elem())
		case v.Kind() == reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i))
			}
		case v.Kind() == reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case v.Kind() == reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		}
	}
	walk(reflect.ValueOf(s.root))
	if seen < 12 || seen != len(s.nodes)-1 {
		t.Errorf("%d nodes reachable, %d numbered", seen, len(s.nodes)-1)
	}
}
