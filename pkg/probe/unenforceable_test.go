package probe

import (
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// server2Keywords is what the probe reports of the second test server
// (FerretDB 2.5 + DocumentDB; `mongomig info` there): ten keywords and
// bsonType number not enforced.
var server2Keywords = KeywordSupport{Known: true,
	Unsupported:      []string{"additionalProperties", "allOf", "anyOf", "dependencies", "enum", "maxProperties", "minProperties", "not", "oneOf", "patternProperties"},
	UnsupportedTypes: []string{"number"},
}

func TestRefusedKeywordsLooksIntoWindows(t *testing.T) {
	// An open window: {$or: [{$and: [version is 3, S3]}, {$and: [version is 0, S0]}]}.
	s3 := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "status", Value: bson.D{{Key: "enum", Value: bson.A{"a", "b"}}}}}}}}}
	s0 := bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "properties", Value: bson.D{{Key: "n", Value: bson.D{{Key: "bsonType", Value: bson.A{"number", "null"}}}}}},
		{Key: "additionalProperties", Value: false},
		{Key: "required", Value: bson.A{"enum"}}, // a field named enum is no keyword
	}}}
	window := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "version", Value: 3}}, s3}}},
		bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "version", Value: 0}}, s0}}},
	}}}
	got := RefusedKeywords(window, &server2Keywords)
	if want := []string{"additionalProperties", "enum", "bsonType: number"}; !reflect.DeepEqual(got, want) {
		t.Errorf("refused = %q, want %q", got, want)
	}
	if got := RefusedKeywords(window, &KeywordSupport{Reason: "validators are unavailable"}); got != nil {
		t.Errorf("keywords unknown (no validators): refused = %q, want none", got)
	}
}
