package bsonx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ExtJSON is a value written as relaxed MongoDB Extended JSON, such as
// {"$oid":"650100000000000000000007"}, 42 or a whole command document. It
// prints as that text and marshals into JSON as the value it holds, not as
// a string that holds JSON.
type ExtJSON string

// MarshalJSON writes the value itself; text that is not JSON (an encoding
// error) is written as a string.
func (e ExtJSON) MarshalJSON() ([]byte, error) {
	if json.Valid([]byte(e)) {
		return []byte(e), nil
	}
	return json.Marshal(string(e))
}

// UnmarshalJSON keeps the value's JSON text, compacted.
func (e *ExtJSON) UnmarshalJSON(b []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*e = ExtJSON(buf.String())
	return nil
}

// ExtJSONOf writes one BSON value as relaxed Extended JSON.
func ExtJSONOf(rv bson.RawValue) ExtJSON {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: rv}}, false, false)
	if err != nil {
		return ExtJSON(rv.String())
	}
	s := string(b)
	return ExtJSON(s[len(`{"v":`) : len(s)-1])
}

// failureGroupJSON is FailureGroup's JSON form: the example ids as values.
type failureGroupJSON struct {
	Path       string    `json:"path"`
	Rule       string    `json:"rule"`
	Message    string    `json:"message"`
	Count      int64     `json:"count"`
	ExampleIDs []ExtJSON `json:"exampleIds"`
}

// MarshalJSON writes the example ids as JSON values ({"$oid": ...}, 42),
// not as strings holding JSON.
func (g FailureGroup) MarshalJSON() ([]byte, error) {
	ids := make([]ExtJSON, len(g.ExampleIDs))
	for i, id := range g.ExampleIDs {
		ids[i] = ExtJSON(id)
	}
	return json.Marshal(failureGroupJSON{Path: g.Path, Rule: g.Rule, Message: g.Message, Count: g.Count, ExampleIDs: ids})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *FailureGroup) UnmarshalJSON(b []byte) error {
	var j failureGroupJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*g = FailureGroup{Path: j.Path, Rule: j.Rule, Message: j.Message, Count: j.Count}
	for _, id := range j.ExampleIDs {
		g.ExampleIDs = append(g.ExampleIDs, string(id))
	}
	return nil
}

// IDLess orders _ids written as relaxed Extended JSON the way MongoDB
// orders them: by BSON type (null, numbers, strings, documents, arrays,
// binary, ObjectIds, booleans, dates), numbers by value, the rest by text
// (an ObjectId's hex text sorts as its bytes).
func IDLess(a, b string) bool {
	ra, rb := idRank(a), idRank(b)
	if ra != rb {
		return ra < rb
	}
	if ra == 1 {
		fa, erra := strconv.ParseFloat(a, 64)
		fb, errb := strconv.ParseFloat(b, 64)
		if erra == nil && errb == nil && fa != fb {
			return fa < fb
		}
	}
	return a < b
}

func idRank(id string) int {
	switch {
	case id == "null":
		return 0
	case id != "" && (id[0] == '-' || id[0] >= '0' && id[0] <= '9'):
		return 1
	case strings.HasPrefix(id, `"`):
		return 2
	case strings.HasPrefix(id, `{"$oid"`):
		return 7
	case strings.HasPrefix(id, `{"$binary"`):
		return 5
	case strings.HasPrefix(id, `{"$date"`):
		return 9
	case strings.HasPrefix(id, "{"):
		return 3
	case strings.HasPrefix(id, "["):
		return 4
	case id == "true" || id == "false":
		return 8
	}
	return 10
}

// IDOf is raw's _id as relaxed Extended JSON, "(no _id)" when it has none.
func IDOf(raw bson.Raw) string {
	rv, err := raw.LookupErr("_id")
	if err != nil {
		return "(no _id)"
	}
	return string(ExtJSONOf(rv))
}

// Lookup returns the value of key in d (the first, if repeated).
func Lookup(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// LookupD returns the value of key in d when it is a document.
func LookupD(d bson.D, key string) (bson.D, bool) {
	v, ok := Lookup(d, key)
	if !ok {
		return nil, false
	}
	sub, ok := v.(bson.D)
	return sub, ok
}
