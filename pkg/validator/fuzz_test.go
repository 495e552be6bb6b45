package validator_test

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// FuzzSchemaAndDocument builds a schema and a document from the fuzz input
// (a byte-driven grammar over the dialect's keywords and BSON's types, so
// most inputs compile), then validates: never a panic, never an internal
// failure (a panic recovered at the package boundary), and the same answer
// twice. Seeds are in testdata/fuzz/FuzzSchemaAndDocument.
func FuzzSchemaAndDocument(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		schema := g.schema(0)
		doc := g.document(0)
		s, err := validator.Compile(schema)
		if (s == nil) == (err == nil) {
			t.Fatalf("want exactly one of schema and error: %v %v", s, err)
		}
		if err != nil {
			return
		}
		raw, err := bson.Marshal(doc)
		if err != nil {
			return
		}
		first := s.Validate(raw)
		for _, f := range first {
			if f.Rule == validator.RuleInternal {
				t.Fatalf("schema %v on %v: %v", schema, doc, f)
			}
		}
		if again := s.Validate(raw); len(again) != len(first) {
			t.Fatalf("Validate is not deterministic: %v then %v", first, again)
		}
	})
}

// gen turns bytes into values; past the end of the input it yields zeros,
// which end every list.
type gen struct {
	data []byte
	i    int
}

func (g *gen) byte() byte {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return b
}

func (g *gen) pick(n int) int { return int(g.byte()) % n }

var fieldNames = []string{"a", "b", "c", "_id", "", "a.b", "x1"}

func (g *gen) name() string { return fieldNames[g.pick(len(fieldNames))] }

var schemaKeywords = []string{
	"bsonType", "type", "required", "properties", "patternProperties", "additionalProperties",
	"minProperties", "maxProperties", "enum", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "uniqueItems", "multipleOf", "minLength", "maxLength", "pattern",
	"items", "additionalItems", "minItems", "maxItems", "dependencies", "allOf", "anyOf",
	"oneOf", "not", "title",
}

func (g *gen) schema(depth int) bson.D {
	d := bson.D{}
	for n := g.pick(5); n > 0; n-- {
		k := schemaKeywords[g.pick(len(schemaKeywords))]
		d = append(d, bson.E{Key: k, Value: g.keyword(k, depth)})
	}
	return d
}

func (g *gen) schemas(depth int, n int) bson.A {
	a := bson.A{}
	for ; n > 0; n-- {
		a = append(a, g.schema(depth+1))
	}
	return a
}

func (g *gen) keyword(k string, depth int) any {
	deep := depth < 3
	switch k {
	case "bsonType":
		return validator.BSONTypes[g.pick(len(validator.BSONTypes))]
	case "type":
		return validator.JSONTypes[g.pick(len(validator.JSONTypes))]
	case "required":
		a := bson.A{g.name()}
		if g.pick(2) == 1 {
			a = append(a, g.name())
		}
		return a
	case "properties", "patternProperties", "dependencies":
		d := bson.D{}
		for n := g.pick(3); n > 0 && deep; n-- {
			key := g.name()
			if k == "patternProperties" {
				key = []string{"^x", "a", ".*", "^_"}[g.pick(4)]
			}
			var v any = g.schema(depth + 1)
			if k == "dependencies" && g.pick(2) == 0 {
				v = bson.A{g.name()}
			}
			d = append(d, bson.E{Key: key, Value: v})
		}
		return d
	case "additionalProperties", "additionalItems":
		if g.pick(2) == 0 || !deep {
			return g.pick(2) == 0
		}
		return g.schema(depth + 1)
	case "minProperties", "maxProperties", "minLength", "maxLength", "minItems", "maxItems":
		return int32(g.pick(4))
	case "enum":
		a := bson.A{}
		for n := 1 + g.pick(3); n > 0; n-- {
			a = append(a, g.value(depth+1))
		}
		return a
	case "minimum", "maximum":
		return g.number()
	case "multipleOf":
		return []any{int32(1 + g.pick(5)), 0.5, 0.1, bson.NewDecimal128(0x3040000000000000, 3)}[g.pick(4)]
	case "exclusiveMinimum", "exclusiveMaximum", "uniqueItems":
		return g.pick(2) == 0
	case "pattern":
		return []string{"^a", "b$", "[0-9]+", ""}[g.pick(4)]
	case "items":
		if g.pick(2) == 0 && deep {
			return g.schema(depth + 1)
		}
		return g.schemas(depth, g.pick(3))
	case "allOf", "anyOf", "oneOf":
		return g.schemas(depth, 1+g.pick(2))
	case "not":
		return g.schema(depth + 1)
	}
	return "t"
}

func (g *gen) number() any {
	switch g.pick(9) {
	case 0:
		return int32(g.pick(7)) - 3
	case 1:
		return int64(1<<53 + int64(g.pick(3)))
	case 2:
		return float64(g.pick(9)) / 2
	case 3:
		return math.NaN()
	case 4:
		return math.Inf(1 - 2*g.pick(2))
	case 5:
		d, _ := bson.ParseDecimal128([]string{"1.0", "0.1", "NaN", "-Infinity", "2.50", "1E+6144"}[g.pick(6)])
		return d
	case 6:
		return float64(1 << 53)
	case 7:
		return -0.0
	}
	return int64(g.pick(5))
}

func (g *gen) value(depth int) any {
	switch g.pick(12) {
	case 0:
		return g.number()
	case 1:
		return []string{"a", "ab", "x1", "日本", ""}[g.pick(5)]
	case 2:
		if depth < 4 {
			return g.document(depth + 1)
		}
		return nil
	case 3:
		a := bson.A{}
		for n := g.pick(5); n > 0 && depth < 4; n-- {
			a = append(a, g.value(depth+1))
		}
		return a
	case 4:
		return nil
	case 5:
		return bson.Undefined{}
	case 6:
		return bson.Symbol("a")
	case 7:
		return g.pick(2) == 0
	case 8:
		return bson.DateTime(g.pick(3))
	case 9:
		return bson.Timestamp{T: uint32(g.pick(3))}
	case 10:
		return bson.MinKey{}
	}
	return g.number()
}

func (g *gen) document(depth int) bson.D {
	d := bson.D{}
	for n := g.pick(5); n > 0; n-- {
		d = append(d, bson.E{Key: g.name(), Value: g.value(depth)})
	}
	return d
}
