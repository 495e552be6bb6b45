package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/validator"
)

// KeywordSupport is which $jsonSchema keywords ([validator.Keywords] but
// the encryption ones) and bsonType aliases ([validator.BSONTypes]) the
// server's validators enforce as MongoDB does: a validator that uses only
// those keywords refuses a document that violates it with code 121 and
// accepts one that satisfies it. Some servers (DocumentDB, FerretDB 2)
// accept a validator with a keyword they do not know and then refuse every
// write to the collection.
type KeywordSupport struct {
	// Known: the keywords were tried. False when validators are
	// unavailable or the probe was not permitted: whether any keyword is
	// enforced is then unknown, and Reason says why.
	Known  bool   `json:"known"`
	Reason string `json:"reason,omitempty"`
	// Unsupported are the keywords not enforced as MongoDB does, sorted.
	Unsupported []string `json:"unsupported"`
	// UnsupportedTypes are the bsonType aliases not enforced as MongoDB
	// does, in [validator.BSONTypes] order.
	UnsupportedTypes []string `json:"unsupportedTypes"`
	// Answers is what the server did with each unsupported keyword or
	// alias ("bsonType: number"), in the order of Unsupported then
	// UnsupportedTypes.
	Answers []KeywordAnswer `json:"answers,omitempty"`
}

// KeywordAnswer is what the server did with one keyword's probe.
type KeywordAnswer struct {
	// Keyword is the keyword, or "bsonType: ALIAS" for a type alias.
	Keyword string `json:"keyword"`
	Answer  string `json:"answer"`
}

// Refused lists the unsupported keywords ("enum") and bsonType aliases
// ("bsonType: number") that schema, a $jsonSchema document, uses anywhere,
// each once, in the order [KeywordSupport.Answers] has them. Nil when the
// support is not known.
func (k *KeywordSupport) Refused(schema bson.Raw) []string {
	if !k.Known || len(k.Unsupported)+len(k.UnsupportedTypes) == 0 {
		return nil
	}
	used := map[string]bool{}
	SchemaKeywords(schema, func(keyword, alias string) {
		if alias != "" {
			used["bsonType: "+alias] = true
		} else {
			used[keyword] = true
		}
	})
	var out []string
	for _, kw := range k.Unsupported {
		if used[kw] {
			out = append(out, kw)
		}
	}
	for _, t := range k.UnsupportedTypes {
		if used["bsonType: "+t] {
			out = append(out, "bsonType: "+t)
		}
	}
	return out
}

// SchemaKeywords calls fn for every keyword schema (a $jsonSchema
// document) uses, at any depth, and for every bsonType alias with keyword
// "bsonType"; the names under properties, patternProperties and
// dependencies are field names, not keywords, and enum's values are not
// looked into.
func SchemaKeywords(schema bson.Raw, fn func(keyword, alias string)) {
	elems, err := schema.Elements()
	if err != nil {
		return
	}
	for _, e := range elems {
		key, v := e.Key(), e.Value()
		fn(key, "")
		switch key {
		case "bsonType":
			if s, ok := v.StringValueOK(); ok {
				fn(key, s)
			} else if a, ok := v.ArrayOK(); ok {
				vals, _ := a.Values()
				for _, t := range vals {
					if s, ok := t.StringValueOK(); ok {
						fn(key, s)
					}
				}
			}
		case "properties", "patternProperties", "dependencies":
			if d, ok := v.DocumentOK(); ok {
				vals, _ := d.Values()
				for _, sub := range vals {
					if sd, ok := sub.DocumentOK(); ok {
						SchemaKeywords(sd, fn)
					}
				}
			}
		case "items", "allOf", "anyOf", "oneOf":
			if a, ok := v.ArrayOK(); ok {
				vals, _ := a.Values()
				for _, sub := range vals {
					if sd, ok := sub.DocumentOK(); ok {
						SchemaKeywords(sd, fn)
					}
				}
			} else if sd, ok := v.DocumentOK(); ok {
				SchemaKeywords(sd, fn)
			}
		case "additionalItems", "additionalProperties", "not":
			if sd, ok := v.DocumentOK(); ok {
				SchemaKeywords(sd, fn)
			}
		}
	}
}

// keywordCase is one keyword's or alias's probe: under a validator
// {$jsonSchema: {properties: {field: schema}}}, {field: pass} must be
// accepted and {field: fail} (when set) refused with code 121.
type keywordCase struct {
	name   string // the keyword, or "bsonType: ALIAS"
	field  string
	schema bson.D
	pass   any
	fail   any // nil: an annotation, nothing to refuse
}

// keywordCollection is the scratch collection the keyword probe uses.
const keywordCollection = "keywords"

// probeKeywords tries every keyword and alias in one validator and one
// unordered insert; those whose documents did not fare as on MongoDB are
// tried again one by one (a server that refuses one keyword may refuse
// every write under a validator that has it).
func probeKeywords(ctx context.Context, db *mongo.Database, validators Capability) (KeywordSupport, error) {
	if !validators.Available {
		return KeywordSupport{Reason: "validators are unavailable (" + validators.Reason + ")"}, nil
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: keywordCollection}}).Err(); err != nil {
		refused, cerr := classify(err, "create")
		if cerr != nil {
			return KeywordSupport{}, cerr
		}
		return KeywordSupport{Reason: "not probed: " + refused.Reason}, nil
	}
	cases := keywordCases()
	answers, err := tryKeywords(ctx, db, cases)
	if err != nil {
		return KeywordSupport{}, err
	}
	ks := KeywordSupport{Known: true, Unsupported: []string{}, UnsupportedTypes: []string{}}
	var found []KeywordAnswer
	for i, c := range cases {
		if answers[i] == "" {
			continue
		}
		answer, err := tryAlone(ctx, db, c)
		if err != nil {
			return KeywordSupport{}, err
		}
		if answer != "" {
			found = append(found, KeywordAnswer{Keyword: c.name, Answer: answer})
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		ti, tj := isTypeCase(found[i].Keyword), isTypeCase(found[j].Keyword)
		if ti != tj {
			return !ti
		}
		return !ti && found[i].Keyword < found[j].Keyword
	})
	for _, a := range found {
		if isTypeCase(a.Keyword) {
			ks.UnsupportedTypes = append(ks.UnsupportedTypes, strings.TrimPrefix(a.Keyword, "bsonType: "))
		} else {
			ks.Unsupported = append(ks.Unsupported, a.Keyword)
		}
	}
	ks.Answers = found
	return ks, nil
}

// aloneAttempts is how many times a keyword is tried alone before it is
// found unsupported.
const aloneAttempts = 3

// tryAlone tries c alone until its documents fare as on MongoDB, at most
// aloneAttempts times, and returns the last answer ("": supported). A
// server may apply a collMod's validator to writes on other connections a
// little later (the second test server, whose catalogue is cached per
// backend, was seen to refuse a keyword once in a run and accept it in
// every other): a write checked against the validator before it was
// changed can only make a keyword look unsupported (each case has a field
// of its own, which the previous validator leaves unchecked), never
// supported, so one attempt that fares as on MongoDB settles it.
func tryAlone(ctx context.Context, db *mongo.Database, c keywordCase) (string, error) {
	var answer string
	for attempt := range aloneAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
			}
		}
		alone, err := tryKeywords(ctx, db, []keywordCase{c})
		if err != nil {
			return "", err
		}
		if answer = alone[0]; answer == "" {
			return "", nil
		}
	}
	return answer, nil
}

func isTypeCase(name string) bool { return strings.HasPrefix(name, "bsonType: ") }

// tryKeywords sets the validator of every case (collMod, strict, error)
// and inserts each case's documents in one unordered insertMany. Its
// answers are indexed like cases: "" where the case fared as on MongoDB,
// else what the server did.
func tryKeywords(ctx context.Context, db *mongo.Database, cases []keywordCase) ([]string, error) {
	answers := make([]string, len(cases))
	props := bson.D{}
	for _, c := range cases {
		props = append(props, bson.E{Key: c.field, Value: c.schema})
	}
	cmd := bson.D{
		{Key: "collMod", Value: keywordCollection},
		{Key: "validator", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: props}}}}},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	}
	refused, err := classify(db.RunCommand(ctx, cmd).Err(), "collMod with the keyword")
	if err != nil {
		return nil, err
	}
	if refused.Reason != "" {
		for i := range answers {
			answers[i] = refused.Reason
		}
		return answers, nil
	}
	var docs []any
	var owner []int    // docs[j] belongs to cases[owner[j]]
	var failing []bool // docs[j] violates its case
	for i, c := range cases {
		docs = append(docs, bson.D{{Key: c.field, Value: c.pass}})
		owner, failing = append(owner, i), append(failing, false)
		if c.fail != nil {
			docs = append(docs, bson.D{{Key: c.field, Value: c.fail}})
			owner, failing = append(owner, i), append(failing, true)
		}
	}
	_, err = db.Collection(keywordCollection).InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	writeErrs := map[int]mongo.BulkWriteError{}
	var bwe mongo.BulkWriteException
	switch {
	case err == nil:
	case errors.As(err, &bwe) && bwe.WriteConcernError == nil:
		for _, we := range bwe.WriteErrors {
			writeErrs[we.Index] = we
		}
	default:
		refused, cerr := classify(err, "insert under the keyword's validator")
		if cerr != nil {
			return nil, cerr
		}
		for i := range answers {
			answers[i] = refused.Reason
		}
		return answers, nil
	}
	for j := range docs {
		i := owner[j]
		if answers[i] != "" {
			continue
		}
		we, refusedDoc := writeErrs[j]
		switch {
		case !failing[j] && refusedDoc:
			answers[i] = fmt.Sprintf("refused a document that satisfies it: %s (code %d)", TrimServerInternals(we.Message), we.Code)
		case failing[j] && !refusedDoc:
			answers[i] = "accepted a document that violates it"
		case failing[j] && we.Code != CodeDocumentValidationFailure:
			answers[i] = fmt.Sprintf("refused a document that violates it with %s (code %d), not DocumentValidationFailure (121)", TrimServerInternals(we.Message), we.Code)
		}
	}
	return answers, nil
}

// keywordSchemas are each keyword's probe: a subschema, a value that
// satisfies it and one that violates it (nil for annotations).
var keywordSchemas = map[string]struct {
	schema     bson.D
	pass, fail any
}{
	"additionalItems":      {bson.D{{Key: "items", Value: bson.A{bson.D{}}}, {Key: "additionalItems", Value: false}}, bson.A{1}, bson.A{1, 2}},
	"additionalProperties": {bson.D{{Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{}}}}, {Key: "additionalProperties", Value: false}}, bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}},
	"allOf":                {bson.D{{Key: "allOf", Value: bson.A{bson.D{{Key: "minimum", Value: 1}}, bson.D{{Key: "maximum", Value: 3}}}}}, 2, 5},
	"anyOf":                {bson.D{{Key: "anyOf", Value: bson.A{bson.D{{Key: "minimum", Value: 5}}, bson.D{{Key: "maximum", Value: 1}}}}}, 0, 3},
	"bsonType":             {bson.D{{Key: "bsonType", Value: "int"}}, int32(1), "s"},
	"dependencies":         {bson.D{{Key: "dependencies", Value: bson.D{{Key: "a", Value: bson.A{"b"}}}}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, bson.D{{Key: "a", Value: 1}}},
	"description":          {bson.D{{Key: "description", Value: "d"}}, 1, nil},
	"enum":                 {bson.D{{Key: "enum", Value: bson.A{1, 2}}}, 1, 3},
	"exclusiveMaximum":     {bson.D{{Key: "maximum", Value: 5}, {Key: "exclusiveMaximum", Value: true}}, 4, 5},
	"exclusiveMinimum":     {bson.D{{Key: "minimum", Value: 5}, {Key: "exclusiveMinimum", Value: true}}, 6, 5},
	"items":                {bson.D{{Key: "items", Value: bson.D{{Key: "minimum", Value: 1}}}}, bson.A{1}, bson.A{0}},
	"maxItems":             {bson.D{{Key: "maxItems", Value: 1}}, bson.A{1}, bson.A{1, 2}},
	"maxLength":            {bson.D{{Key: "maxLength", Value: 1}}, "a", "ab"},
	"maxProperties":        {bson.D{{Key: "maxProperties", Value: 1}}, bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}},
	"maximum":              {bson.D{{Key: "maximum", Value: 5}}, 5, 6},
	"minItems":             {bson.D{{Key: "minItems", Value: 1}}, bson.A{1}, bson.A{}},
	"minLength":            {bson.D{{Key: "minLength", Value: 2}}, "ab", "a"},
	"minProperties":        {bson.D{{Key: "minProperties", Value: 1}}, bson.D{{Key: "a", Value: 1}}, bson.D{}},
	"minimum":              {bson.D{{Key: "minimum", Value: 5}}, 5, 4},
	"multipleOf":           {bson.D{{Key: "multipleOf", Value: 2}}, 4, 3},
	"not":                  {bson.D{{Key: "not", Value: bson.D{{Key: "minimum", Value: 5}}}}, 1, 6},
	"oneOf":                {bson.D{{Key: "oneOf", Value: bson.A{bson.D{{Key: "minimum", Value: 1}}, bson.D{{Key: "minimum", Value: 3}}}}}, 2, 4},
	"pattern":              {bson.D{{Key: "pattern", Value: "^a"}}, "ab", "b"},
	"patternProperties":    {bson.D{{Key: "patternProperties", Value: bson.D{{Key: "^a", Value: bson.D{{Key: "minimum", Value: 1}}}}}}, bson.D{{Key: "ab", Value: 1}}, bson.D{{Key: "ab", Value: 0}}},
	"properties":           {bson.D{{Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{{Key: "minimum", Value: 1}}}}}}, bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 0}}},
	"required":             {bson.D{{Key: "required", Value: bson.A{"a"}}}, bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "b", Value: 1}}},
	"title":                {bson.D{{Key: "title", Value: "t"}}, 1, nil},
	"type":                 {bson.D{{Key: "type", Value: "string"}}, "s", 1},
	"uniqueItems":          {bson.D{{Key: "uniqueItems", Value: true}}, bson.A{1, 2}, bson.A{1, 1}},
}

// probeOnlyByMongoDB are keywords of [validator.Keywords] not probed: the
// client-side field level encryption ones, which need an encrypted field.
var probeOnlyByMongoDB = []string{"encrypt", "encryptMetadata"}

// typeValues are a value of each bsonType alias.
var typeValues = map[string]any{
	"double":              1.5,
	"string":              "s",
	"object":              bson.D{},
	"array":               bson.A{},
	"binData":             bson.Binary{Data: []byte{1}},
	"undefined":           bson.Undefined{},
	"objectId":            bson.ObjectID{1},
	"bool":                true,
	"date":                bson.DateTime(0),
	"null":                bson.Null{},
	"regex":               bson.Regex{Pattern: "a"},
	"dbPointer":           bson.DBPointer{DB: "d", Pointer: bson.ObjectID{1}},
	"javascript":          bson.JavaScript("1"),
	"symbol":              bson.Symbol("s"),
	"javascriptWithScope": bson.CodeWithScope{Code: "1", Scope: bson.D{}},
	"int":                 int32(1),
	"timestamp":           bson.Timestamp{T: 1, I: 1},
	"long":                int64(1),
	"decimal":             decimalOne,
	"minKey":              bson.MinKey{},
	"maxKey":              bson.MaxKey{},
	"number":              int32(1),
}

var decimalOne, _ = bson.ParseDecimal128("1")

// keywordCases are the probes of every keyword of [validator.Keywords]
// (but [probeOnlyByMongoDB]) and every alias of [validator.BSONTypes].
func keywordCases() []keywordCase {
	var cases []keywordCase
	for _, kw := range validator.Keywords {
		if slices.Contains(probeOnlyByMongoDB, kw) {
			continue
		}
		s := keywordSchemas[kw]
		cases = append(cases, keywordCase{name: kw, field: "k_" + kw, schema: s.schema, pass: s.pass, fail: s.fail})
	}
	for _, t := range validator.BSONTypes {
		var fail any = "s"
		if t == "string" || t == "symbol" {
			fail = int32(1)
		}
		cases = append(cases, keywordCase{name: "bsonType: " + t, field: "t_" + t, schema: bson.D{{Key: "bsonType", Value: t}}, pass: typeValues[t], fail: fail})
	}
	return cases
}
