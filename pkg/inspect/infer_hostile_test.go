package inspect

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/validator"
)

// inferDocs is Infer on documents held in memory, per collection, as
// inferCollection does it (without a server): statistics, schema,
// mixed types and examples.
func inferDocs(t testing.TB, opts InferOptions, colls map[string][]bson.D) *Inference {
	t.Helper()
	if opts.EnumMax == 0 {
		opts.EnumMax = DefaultEnumMax
	}
	inf := &Inference{Database: "app", enumMax: opts.EnumMax, stats: map[string]*collector{}}
	for _, name := range slices.Sorted(maps.Keys(colls)) {
		col := &collector{root: newObjStats(), enumCap: opts.EnumMax, maxPaths: opts.MaxPaths}
		ic := &InferredCollection{Name: name, Read: ReadAll}
		for _, d := range colls[name] {
			raw, err := bson.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := col.add(raw); err != nil {
				t.Fatal(err)
			}
			ic.Documents++
			if len(ic.examples) < opts.Examples {
				ic.examples = append(ic.examples, raw)
			}
		}
		ic.Total = ic.Documents
		b := &schemaBuilder{enumMax: opts.EnumMax}
		ic.schema = b.object(col.root, false)
		ic.Schema = schemaExtJSON(ic.schema)
		ic.counts = DataCounts{Enums: b.enums, EnumValues: b.enumValues, PropertyNames: b.propKeys}
		ic.MixedTypes = mixedTypes(col.root, "")
		inf.Warnings = append(inf.Warnings, col.limitWarnings(name)...)
		inf.FromData.add(ic.counts)
		inf.FromData.Examples += len(ic.examples)
		inf.Collections = append(inf.Collections, ic)
		inf.stats[name] = col
	}
	return inf
}

// lintClean renders inf and checks that lint finds no error in it.
func lintClean(t testing.TB, inf *Inference) string {
	t.Helper()
	file, err := inf.File("0001_baseline.yaml", FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lint.Lint(fstest.MapFS{"0001_baseline.yaml": &fstest.MapFile{Data: file}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 {
		t.Fatalf("lint refuses the baseline: %+v\n%.4000s", rep.Problems, file)
	}
	return string(file)
}

// accounts are documents holding secrets and personal data, each value
// repeated often enough to pass the old enum rule (few distinct values,
// each seen several times), plus real labels.
func accounts() []bson.D {
	secrets := []struct{ password, key, email, card, ssn, phone, pin, word string }{
		{"hunter", "sk_live_51HqLyjWDarjtT1zdp7dc", "ada@example.com", "4111111111111111", "078-05-1120", "+1 555 0100", "1234", "swordfish"},
		{"letmein", "sk_live_4eC39HqLyjWDarjtT1zd", "alan@example.com", "5500000000000004", "219-09-9999", "+1 555 0101", "0000", "Opensesame"},
	}
	var docs []bson.D
	for i := 0; i < 60; i++ {
		s := secrets[i%2]
		docs = append(docs, bson.D{
			{Key: "_id", Value: []string{"ada@example.com", "alan@example.com", "u-17"}[i%3] + fmt.Sprint(i)},
			{Key: "password", Value: s.password}, {Key: "apiKey", Value: s.key}, {Key: "email", Value: s.email},
			{Key: "card", Value: bson.D{{Key: "number", Value: s.card}, {Key: "brand", Value: "visa"}}},
			{Key: "ssn", Value: s.ssn}, {Key: "phone", Value: s.phone}, {Key: "pin", Value: s.pin},
			{Key: "secretWord", Value: s.word}, {Key: "plan", Value: []string{"free", "pro"}[i%2]},
			{Key: "status", Value: []string{"active", "suspended", "closed"}[i%3]},
			{Key: "sessions", Value: bson.D{{Key: fmt.Sprintf("s%xq9%07d", i, i), Value: int32(1)}}},
			{Key: "readBy", Value: bson.D{{Key: s.email, Value: bson.DateTime(1700000000000)}}},
			{Key: "score", Value: []any{int32(3), "n/a"}[i%2]},
		})
	}
	return docs
}

// TestInitKeepsSecretsOutOfBaseline: secrets and
// personal data with few distinct values get no enum, a map's keys are no
// properties (also with enums off), the count of what came from the data
// is given, and mixed-type _ids that may be personal data are hidden.
func TestInitKeepsSecretsOutOfBaseline(t *testing.T) {
	for _, enumMax := range []int{DefaultEnumMax, -1} {
		inf := inferDocs(t, InferOptions{EnumMax: enumMax}, map[string][]bson.D{"accounts": accounts()})
		file := lintClean(t, inf)
		for _, never := range []string{"hunter", "letmein", "sk_live", "example.com", "4111", "5500", "078-05", "219-09", "555 01",
			"1234", "0000", "swordfish", "Opensesame", "s0q9", "s1q9"} {
			if strings.Contains(file, never) {
				t.Errorf("enum-max %d: the baseline holds %q:\n%s", enumMax, never, file)
			}
		}
		for _, want := range []string{"sessions: {bsonType: object}", "readBy: {bsonType: object}", "card:\n"} {
			if !strings.Contains(file, want) {
				t.Errorf("enum-max %d: the baseline lacks %q:\n%s", enumMax, want, file)
			}
		}
		labels := strings.Contains(file, "status: {bsonType: string, enum: [active, closed, suspended]}") &&
			strings.Contains(file, "plan: {bsonType: string, enum: [free, pro]}")
		if enumMax > 0 != labels {
			t.Errorf("enum-max %d: labels enumerated %v:\n%s", enumMax, labels, file)
		}
		wantEnums := map[int]DataCounts{DefaultEnumMax: {Enums: 2, EnumValues: 5, PropertyNames: 16}, -1: {PropertyNames: 16}}[enumMax]
		if inf.FromData != wantEnums {
			t.Errorf("enum-max %d: from data = %+v, want %+v", enumMax, inf.FromData, wantEnums)
		}
		mixed := inf.Collections[0].MixedTypes
		if len(mixed) != 1 || mixed[0].Path != "score" {
			t.Fatalf("mixed = %+v", mixed)
		}
		for _, tc := range mixed[0].Types {
			for _, id := range tc.ExampleIDs {
				if strings.Contains(string(id), "@") || !strings.Contains(string(id), "hidden: a string _id") && !strings.HasPrefix(string(id), `"u-17`) {
					t.Errorf("mixed-type example _id %s", id)
				}
			}
		}
	}
}

// TestInitSchemaAcceptsOrdinaryWrites: the shop data
// of the issue (three SKUs, double prices, int quantities, eight tags, one
// bio seen seven times) gives a schema that, enforced, accepts the next
// ordinary order: a whole-number price, a new SKU, a long quantity, a new
// tag, another bio; labels seen often stay enums.
func TestInitSchemaAcceptsOrdinaryWrites(t *testing.T) {
	tags := []string{"sale", "new", "gift", "eco", "kids", "home", "sport", "retro"}
	var orders []bson.D
	for i := 0; i < 60; i++ {
		d := bson.D{
			{Key: "_id", Value: bson.NewObjectIDFromTimestamp(time.Unix(1700000000+int64(i), 0))},
			{Key: "sku", Value: []string{"MUG-1", "TEE-2", "BK-3"}[i%3]},
			{Key: "price", Value: []float64{9.5, 19.99, 4.25}[i%3]},
			{Key: "qty", Value: int32(1 + i%3)},
			{Key: "tags", Value: bson.A{tags[i%8], tags[(i+3)%8]}},
			{Key: "status", Value: []string{"pending", "paid", "shipped"}[i%3]},
		}
		if i < 7 {
			d = append(d, bson.E{Key: "bio", Value: "Coffee lover and weekend baker"})
		}
		orders = append(orders, d)
	}
	inf := inferDocs(t, InferOptions{}, map[string][]bson.D{"orders": orders})
	file := lintClean(t, inf)
	for _, want := range []string{"sku: {bsonType: string}", "price: {bsonType: [int, long, double]}", "qty: {bsonType: [int, long, double]}",
		"items: {bsonType: string}", "bio: {bsonType: string}", "status: {bsonType: string, enum: [paid, pending, shipped]}"} {
		if !strings.Contains(file, want) {
			t.Errorf("the baseline lacks %q:\n%s", want, file)
		}
	}
	compiled, err := validator.Compile(inf.Collections[0].schema)
	if err != nil {
		t.Fatal(err)
	}
	next := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "sku", Value: "CAP-5"}, {Key: "price", Value: int32(12)},
		{Key: "qty", Value: int64(2)}, {Key: "tags", Value: bson.A{"clearance"}}, {Key: "status", Value: "paid"},
		{Key: "bio", Value: "Tea, mostly"}}
	if f := compiled.ValidateD(next); len(f) != 0 {
		t.Errorf("an ordinary new order fails the baseline: %v", f)
	}
	typo := append(bson.D{}, next...)
	typo[5].Value = "payed"
	if f := compiled.ValidateD(typo); len(f) == 0 {
		t.Error("a status outside the labels passes: the enum was lost")
	}
}
