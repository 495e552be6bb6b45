package validator_test

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// Benchmarks come in pairs, X/mongomig and X/baseline, measured in the same
// run (`make bench` prints the ratios). The baseline is only decoding the
// same raw BSON into a bson.D, the least any client-side check must do.

const benchDocs = 100_000

// realisticDocs returns n documents of 22+ fields, nested, with arrays.
func realisticDocs(n int) []bson.Raw {
	out := make([]bson.Raw, n)
	for i := range out {
		var items bson.A
		for j := 0; j < 1+i%4; j++ {
			items = append(items, bson.D{{Key: "sku", Value: fmt.Sprintf("SKU-%d", j)}, {Key: "name", Value: "Mug"}, {Key: "price", Value: 9.5 + float64(j)}, {Key: "qty", Value: int32(1 + j)}})
		}
		d := bson.D{
			{Key: "_id", Value: bson.NewObjectID()}, {Key: "userId", Value: bson.NewObjectID()},
			{Key: "status", Value: []string{"pending", "paid", "shipped"}[i%3]}, {Key: "createdAt", Value: bson.DateTime(1700000000000 + int64(i))},
			{Key: "currency", Value: "EUR"}, {Key: "items", Value: items},
			{Key: "totals", Value: bson.D{{Key: "gross", Value: 19.0}, {Key: "net", Value: 16.0}, {Key: "tax", Value: 3.0}}},
			{Key: "shipping", Value: bson.D{{Key: "name", Value: "Ada Lovelace"}, {Key: "street", Value: "1 Analytical Way"}, {Key: "city", Value: "London"}, {Key: "zip", Value: "N1 7AA"}, {Key: "country", Value: "GB"}}},
			{Key: "billing", Value: bson.D{{Key: "sameAsShipping", Value: true}}},
			{Key: "tags", Value: bson.A{"gift", "priority"}}, {Key: "notes", Value: "Leave at the door"},
			{Key: "channel", Value: "web"}, {Key: "coupon", Value: nil}, {Key: "discount", Value: int32(0)},
			{Key: "weightKg", Value: 1.25}, {Key: "paidAt", Value: bson.DateTime(1700000100000)},
			{Key: "shippedAt", Value: nil}, {Key: "carrier", Value: "DHL"}, {Key: "tracking", Value: "JJD000390007"},
			{Key: "version", Value: int32(4)}, {Key: "source", Value: "import"}, {Key: "flags", Value: bson.A{int32(1), int32(2)}},
		}
		out[i], _ = bson.Marshal(d)
	}
	return out
}

const realisticSchema = `{"bsonType": "object", "required": ["userId", "items", "status", "createdAt", "currency", "totals"], "properties": {
	"userId": {"bsonType": "objectId"}, "status": {"enum": ["pending", "paid", "shipped", "cancelled"]}, "createdAt": {"bsonType": "date"},
	"currency": {"enum": ["EUR", "USD", "GBP"]},
	"totals": {"bsonType": "object", "required": ["gross"], "properties": {"gross": {"bsonType": ["double", "decimal", "int", "long"], "minimum": 0}}},
	"shipping": {"bsonType": "object", "required": ["name", "city", "country"], "properties": {"zip": {"bsonType": "string", "maxLength": 10}, "country": {"bsonType": "string", "pattern": "^[A-Z]{2}$"}}},
	"tags": {"bsonType": "array", "items": {"bsonType": "string"}, "uniqueItems": true},
	"items": {"bsonType": "array", "minItems": 1, "items": {"bsonType": "object", "required": ["sku", "name", "price", "qty"],
		"properties": {"sku": {"bsonType": "string"}, "name": {"bsonType": "string", "minLength": 1}, "price": {"bsonType": ["double", "decimal", "int", "long"], "minimum": 0}, "qty": {"bsonType": "int", "minimum": 1}}}}}}`

func benchSchema(b *testing.B) *validator.Schema {
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(realisticSchema), false, &d); err != nil {
		b.Fatal(err)
	}
	s, err := validator.Compile(d)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkValidate100k validates 100k documents on one core; the
// baseline decodes them. docs/s is reported per run of the loop body.
func BenchmarkValidate100k(b *testing.B) {
	docs := realisticDocs(benchDocs)
	s := benchSchema(b)
	if fs := s.Validate(docs[0]); len(fs) > 0 {
		b.Fatalf("benchmark document invalid: %v", fs)
	}
	b.Run("mongomig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				if fs := s.Validate(d); fs != nil {
					b.Fatal(fs)
				}
			}
		}
		b.ReportMetric(float64(b.N*benchDocs)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				var out bson.D
				if err := bson.Unmarshal(d, &out); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*benchDocs)/b.Elapsed().Seconds(), "docs/s")
	})
}

// BenchmarkValidateParallel is the same on every core (b.RunParallel), to
// show validation scales with cores as decoding does.
func BenchmarkValidateParallel(b *testing.B) {
	docs := realisticDocs(10_000)
	s := benchSchema(b)
	b.Run("mongomig", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				_ = s.Validate(docs[i%len(docs)])
				i++
			}
		})
	})
	b.Run("baseline", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				var out bson.D
				_ = bson.Unmarshal(docs[i%len(docs)], &out)
				i++
			}
		})
	})
}
