package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/inspect"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/report"
)

// inferBaseline infers db's baseline and checks the file it writes: it
// lints without error, and validating the same documents against it finds
// no failure.
func inferBaseline(t *testing.T, db *mongo.Database, opts inspect.InferOptions) (*inspect.Inference, string) {
	t.Helper()
	ctx := context.Background()
	inf, err := inspect.Infer(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	file, err := inf.File("0001_baseline.yaml", inspect.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"0001_baseline.yaml": &fstest.MapFile{Data: file}}
	lrep, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if lrep.Errors != 0 || lrep.Warnings != 0 {
		t.Fatalf("the baseline does not lint cleanly: %+v\n%s", lrep.Problems, file)
	}
	rp, err := report.New(db, newRunner(t, db, fsys).Migrations())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rp.Validate(ctx, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Collections {
		if c.Failing != 0 {
			t.Errorf("%s: %d documents fail the baseline: %+v\n%s", c.Collection, c.Failing, c.Groups, file)
		}
	}
	return inf, string(file)
}

func inferred(t *testing.T, inf *inspect.Inference, name string) *inspect.InferredCollection {
	t.Helper()
	for _, c := range inf.Collections {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no collection %s in %+v", name, inf.Collections)
	return nil
}

// TestInitInfersSampleData: the baseline of the sample database lints,
// validates every document, requires only what every document has, makes
// enums of small closed sets only, and declares the existing indexes.
func TestInitInfersSampleData(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	// (FerretDB accepts sparse but leaves it out of listIndexes, so the
	// indexes here are ones it reports faithfully.)
	for coll, idx := range map[string]mongo.IndexModel{
		"users":  {Keys: bson.D{{Key: "createdAt", Value: -1}}, Options: options.Index().SetName("recent")},
		"orders": {Keys: bson.D{{Key: "userId", Value: 1}, {Key: "createdAt", Value: -1}}, Options: options.Index().SetUnique(true)},
	} {
		if _, err := db.Collection(coll).Indexes().CreateOne(ctx, idx); err != nil {
			t.Fatal(err)
		}
	}
	inf, file := inferBaseline(t, db, inspect.InferOptions{})
	if len(inf.Collections) != 4 {
		t.Fatalf("collections = %d, want 4", len(inf.Collections))
	}
	users := inferred(t, inf, "users")
	if users.Documents != 40 || users.Read != inspect.ReadAll || len(users.MixedTypes) != 0 {
		t.Errorf("users = %+v", users)
	}
	if len(users.Indexes) != 1 || users.Indexes[0].Name != "recent" || users.Indexes[0].Unique {
		t.Errorf("users indexes = %+v", users.Indexes)
	}
	for _, want := range []string{
		// users 7 and 23 have no email; legacyId is on every third user.
		`required: [_id, name, createdAt]`,
		"# present 95% (38/40): string 38\n          email: {bsonType: string}",
		// Numbers: the family a following write may store.
		"# present 35% (14/40): int 14\n          legacyId: {bsonType: [int, long, double]}",
		`status: {bsonType: string, enum: [cancelled, paid, pending, shipped]}`,
		"sku: {bsonType: string}", // codes are no labels: a new SKU must pass
		"array length min 1, median 2, max 3",
		"validationLevel: moderate\n    validationAction: warn",
		`- {keys: {createdAt: -1}, name: recent}`,
		`- {keys: {userId: 1, createdAt: -1}, unique: true}`,
		"text: {bsonType: string}", // free text: no enum
	} {
		if !strings.Contains(file, want) {
			t.Errorf("the file lacks %q:\n%s", want, file)
		}
	}
	for _, never := range []string{"Lovelace", "example.com", "thanks for the update", "userId: {bsonType: objectId, enum"} {
		if strings.Contains(file, never) {
			t.Errorf("the file holds %q (document values beyond small enums):\n%s", never, file)
		}
	}
}

// TestInitNamesMixedTypes: a generated collection with mixed types, nested
// documents and arrays in arrays of documents (FerretDB stores no array
// directly in an array: TestInferNestedArrays covers those); the report
// names each mixed field with its counts and example _ids, the schema
// accepts every document, and the --examples documents lint.
func TestInitNamesMixedTypes(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	var docs []any
	ids := make([]bson.ObjectID, 200)
	for i := range ids {
		ids[i] = sampledata.ID("orders", i)
		var price any = float64(i) + 0.5
		if i%40 == 3 {
			price = fmt.Sprintf("%d.50", i) // 5 of 200 stored as strings
		}
		var zip any = int32(10000 + i)
		if i%50 == 7 {
			zip = "0" + fmt.Sprint(1000+i)
		}
		d := bson.D{
			{Key: "_id", Value: ids[i]},
			{Key: "price", Value: price},
			{Key: "address", Value: bson.D{{Key: "city", Value: []string{"Oslo", "Lima", "Pune"}[i%3]}, {Key: "zip", Value: zip}}},
			{Key: "lines", Value: lines(i)},
			{Key: "note", Value: fmt.Sprintf("free text number %d", i)},
		}
		if i%10 == 0 {
			d = append(d, bson.E{Key: "coupon", Value: nil})
		}
		docs = append(docs, d)
	}
	if _, err := db.Collection("things").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	inf, file := inferBaseline(t, db, inspect.InferOptions{Examples: 4})
	things := inferred(t, inf, "things")
	got := map[string]string{}
	for _, m := range things.MixedTypes {
		var parts []string
		for _, tc := range m.Types {
			parts = append(parts, fmt.Sprintf("%s %d %v", tc.Type, tc.Count, tc.ExampleIDs))
		}
		got[m.Path] = strings.Join(parts, "; ")
	}
	oid := func(i int) string { return `{"$oid":"` + ids[i].Hex() + `"}` }
	want := map[string]string{
		"price":       fmt.Sprintf("double 195 [%s %s %s]; string 5 [%s %s %s]", oid(0), oid(1), oid(2), oid(3), oid(43), oid(83)),
		"address.zip": fmt.Sprintf("int 196 [%s %s %s]; string 4 [%s %s %s]", oid(0), oid(1), oid(2), oid(7), oid(57), oid(107)),
		// 399 lines: the last one of each document has a long.
		"lines[].amount": fmt.Sprintf("long 200 [%s %s %s]; int 199 [%s %s %s]", oid(0), oid(1), oid(2), oid(1), oid(2), oid(4)),
	}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("mixed %s = %q, want %q", path, got[path], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("mixed types = %v, want only %v", got, want)
	}
	for _, w := range []string{
		"# present 100% (200/200): double 195, string 5 (mixed types)\n          price: {bsonType: [int, long, double, string]}",
		// tags are an open set, a city is personal data: no enums.
		"tags:\n                  bsonType: array\n                  # items (400 in all): string 400\n                  items: {bsonType: string}",
		"city: {bsonType: string}",
		"# present 10% (20/200): null 20\n          coupon: {bsonType: \"null\"}",
		"mixed types at price: double 195, string 5",
		"note: {bsonType: string}",
		"required: [_id, price, address, lines, note]",
		// Examples (asked for) are checked by lint against the schema.
		"examples:\n      # documents as read (real values: remove personal data before committing)\n      - before: {",
		`"price": "3.50"`,
	} {
		if !strings.Contains(file, w) {
			t.Errorf("the file lacks %q:\n%s", w, file)
		}
	}
}

// lines gives document i one to three lines whose amount is an int, and
// a long in the last line; the first line has tags (an array in an array
// of documents: FerretDB refuses arrays directly in arrays).
func lines(i int) bson.A {
	out := bson.A{}
	n := 1 + i%3
	for j := 0; j < n; j++ {
		var amount any = int32(j)
		if j == n-1 {
			amount = int64(j)
		}
		line := bson.D{{Key: "amount", Value: amount}}
		if j == 0 {
			line = append(line, bson.E{Key: "tags", Value: bson.A{"a", []string{"a", "b"}[i%2]}})
		}
		out = append(out, line)
	}
	return out
}

// TestInitSampleWithoutServerSample: FerretDB has no $sample, so --sample
// reads the first N in _id order and says so.
func TestInitSampleWithoutServerSample(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	inf, err := inspect.Infer(ctx, db, inspect.InferOptions{Collections: []string{"users"}, Sample: 10})
	if err != nil {
		t.Fatal(err)
	}
	users := inferred(t, inf, "users")
	if users.Read != inspect.ReadFirst || users.Documents != 10 || users.Total != 40 {
		t.Errorf("users = %+v", users)
	}
	if len(inf.Warnings) != 1 || !strings.Contains(inf.Warnings[0], "first 10 documents") || !strings.Contains(inf.Warnings[0], "$sample") {
		t.Errorf("warnings = %q", inf.Warnings)
	}
	_, err = inspect.Infer(ctx, db, inspect.InferOptions{Collections: []string{"user"}})
	if err == nil || !strings.Contains(err.Error(), "user does not exist; the database has comments, orders, posts, users") {
		t.Errorf("unknown collection: %v", err)
	}
	if !errors.Is(err, inspect.ErrUnknownCollection) {
		t.Errorf("unknown collection: %v is no ErrUnknownCollection", err)
	}
}

// TestInitBaselineUpKeepsExistingIndexes: `up` of a baseline on the
// database it came from sends, per collection, collMod with the validator
// (here refused: client-side only) and createIndexes with each index's
// existing spec, which the server accepts without change; the indexes are
// the same afterwards and the migration is recorded.
func TestInitBaselineUpKeepsExistingIndexes(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	idx := mongo.IndexModel{Keys: bson.D{{Key: "userId", Value: 1}, {Key: "createdAt", Value: -1}}, Options: options.Index().SetUnique(true).SetName("by_user")}
	if _, err := db.Collection("orders").Indexes().CreateOne(ctx, idx); err != nil {
		t.Fatal(err)
	}
	before := indexSpecs(t, db.Collection("orders"))
	_, file := inferBaseline(t, db, inspect.InferOptions{Collections: []string{"orders"}})
	r := newRunner(t, db, fstest.MapFS{"0001_baseline.yaml": &fstest.MapFile{Data: []byte(file)}})
	applied, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, c := range applied.Applied[0].Commands {
		sent = append(sent, c.Name+" "+string(c.Outcome)+" "+string(c.Text))
	}
	if len(sent) != 2 || !strings.HasPrefix(sent[0], `collMod clientSideOnly {"collMod":"orders","validator":{"$jsonSchema":`) ||
		!strings.HasSuffix(sent[0], `"validationLevel":"moderate","validationAction":"warn"}`) ||
		sent[1] != `createIndexes ok {"createIndexes":"orders","indexes":[{"key":{"userId":1,"createdAt":-1},"name":"by_user","unique":true}]}` {
		t.Errorf("up sent:\n%s", strings.Join(sent, "\n"))
	}
	if after := indexSpecs(t, db.Collection("orders")); after != before {
		t.Errorf("indexes changed:\nbefore %s\nafter  %s", before, after)
	}
	if got := ledgerVersions(t, db); len(got) != 1 || got[0] != 1 {
		t.Errorf("ledger = %v", got)
	}
}

func indexSpecs(t *testing.T, coll *mongo.Collection) string {
	t.Helper()
	cur, err := coll.Indexes().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var specs []string
	for cur.Next(context.Background()) {
		specs = append(specs, cur.Current.String())
	}
	return strings.Join(specs, "\n")
}
