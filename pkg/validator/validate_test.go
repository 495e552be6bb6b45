package validator_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/validator"
)

func mustExt(t testing.TB, s string) bson.D {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

func TestCorpus(t *testing.T) {
	if len(corpus) < 150 {
		t.Errorf("the corpus must hold at least 150 cases, has %d", len(corpus))
	}
	names := map[string]bool{}
	for _, tc := range corpus {
		if names[tc.name] {
			t.Errorf("duplicate case name %q", tc.name)
		}
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			s, err := validator.Compile(mustExt(t, tc.schema))
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var got []string
			for _, f := range s.ValidateD(mustExt(t, tc.doc)) {
				got = append(got, f.Path+" "+f.Rule)
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("failures %q, want %q", got, want)
			}
		})
	}
}

func TestFailureDetails(t *testing.T) {
	s, err := validator.Compile(mustExt(t, orderSchema))
	if err != nil {
		t.Fatal(err)
	}
	fs := s.ValidateD(mustExt(t, `{"userId": "u1", "status": "lost", "createdAt": {"$date": "2026-01-02T10:00:00Z"}, "items": [{"sku": "A", "name": "Mug", "price": -1, "qty": 0}]}`))
	var lines []string
	for _, f := range fs {
		lines = append(lines, f.String())
	}
	want := []string{
		`userId: bsonType: must be objectId, found "u1"`,
		`status: enum: must be one of ["pending", "paid", "shipped", "cancelled"], found "lost"`,
		`items.0.price: minimum: must be >= 0, found -1`,
		`items.0.qty: minimum: must be >= 1, found 0`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := s.Validate(bson.Raw{1, 2, 3}); len(got) != 1 || got[0].Rule != "bson" {
		t.Errorf("malformed BSON: %v", got)
	}
}

// TestCorpusOnMongoDB runs every case as a $jsonSchema query on the real
// MongoDB named by MONGOMIG_TEST_URI: the server must agree on valid or not.
// A case whose schema uses a keyword or bsonType alias the server's
// validators do not enforce as MongoDB does (found by probe.Probe, which
// tries each) is skipped, naming it and the server's answer: such a server
// cannot be the judge of it, and TestCorpus still checks it against
// MongoDB's documented outcome.
func TestCorpusOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_corpus", "the corpus is checked against MongoDB's documented behaviour only (the sandbox has no $jsonSchema queries)")
	ctx := context.Background()
	report, err := probe.Probe(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if q := report.Capabilities.JSONSchemaQueries; !q.Available {
		t.Skipf("the server has no $jsonSchema queries (probed: %s)", q.Reason)
	}
	kw := &report.Capabilities.Keywords
	answers := map[string]string{}
	for _, a := range kw.Answers {
		answers[a.Keyword] = a.Answer
	}
	checked, ran := 0, 0
	for i, tc := range corpus {
		t.Run(tc.name, func(t *testing.T) {
			ran++
			schema := mustExt(t, tc.schema)
			raw, err := bson.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			if refused := kw.Refused(raw); len(refused) > 0 {
				var why []string
				for _, k := range refused {
					why = append(why, k+" ("+answers[k]+")")
				}
				t.Skipf("the server's validators do not enforce %s as MongoDB does (probed): it cannot judge this case", strings.Join(why, ", "))
			}
			// One collection per case, so documents with an explicit _id do not
			// collide; a document without _id gets one, as on any insert (the
			// corpus cases that depend on _id carry it explicitly).
			coll := db.Collection(fmt.Sprintf("case_%d", i))
			if _, err := coll.InsertOne(ctx, mustExt(t, tc.doc)); err != nil {
				t.Fatalf("insert: %v", err)
			}
			n, err := coll.CountDocuments(ctx, bson.D{{Key: "$jsonSchema", Value: schema}})
			if err != nil {
				t.Fatal(err)
			}
			if valid := len(tc.want) == 0; (n == 1) != valid {
				t.Errorf("MongoDB says valid=%v, the corpus says %v", n == 1, valid)
			}
			checked++
		})
	}
	t.Logf("%d of %d corpus cases checked against the server, the rest skipped for the keywords it lacks", checked, len(corpus))
	if ran == len(corpus) && checked < len(corpus)/2 {
		t.Errorf("the server judged only %d of %d cases: too few for the corpus to count as checked on it", checked, len(corpus))
	}
}

// TestRequiredReportedFirst pins the order of failures: a document's
// missing required fields first, in the order required lists them, then
// its fields' failures in document order. Validate finds missing fields
// during the walk of the fields (up to 64 names) or one by one (more).
func TestRequiredReportedFirst(t *testing.T) {
	for _, n := range []int{2, 70} {
		t.Run(fmt.Sprint(n, " required"), func(t *testing.T) {
			req := bson.A{"a"}
			for i := 1; i < n-1; i++ {
				req = append(req, fmt.Sprintf("f%d", i))
			}
			req = append(req, "z")
			doc := bson.D{{Key: "b", Value: "s"}}
			for i := 1; i < n-1; i++ {
				doc = append(doc, bson.E{Key: fmt.Sprintf("f%d", i), Value: int32(i)})
			}
			doc = append(doc, bson.E{Key: "c", Value: bson.D{{Key: "y", Value: int32(1)}, {Key: "w", Value: "s"}}})
			s, err := validator.Compile(bson.D{{Key: "required", Value: req}, {Key: "properties", Value: bson.D{
				{Key: "b", Value: bson.D{{Key: "bsonType", Value: "int"}}},
				{Key: "c", Value: bson.D{{Key: "required", Value: bson.A{"x", "w"}}, {Key: "properties", Value: bson.D{
					{Key: "y", Value: bson.D{{Key: "bsonType", Value: "string"}}},
				}}}},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range s.ValidateD(doc) {
				got = append(got, f.Path+" "+f.Rule)
			}
			want := "a required|z required|b bsonType|c.x required|c.y bsonType"
			if strings.Join(got, "|") != want {
				t.Errorf("failures %q, want %s", got, want)
			}
		})
	}
}
