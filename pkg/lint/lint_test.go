package lint_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/version"
)

func TestLintSamplesAreClean(t *testing.T) {
	r, err := lint.Lint(os.DirFS("../../migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Problems) != 0 {
		t.Fatalf("sample migrations have problems: %+v", r.Problems)
	}
	if len(r.Migrations) < 4 {
		t.Errorf("linted %d migrations", len(r.Migrations))
	}
}

// TestLintMapsSchemaErrorsToLines: a schema MongoDB would refuse is
// reported at the line and column of the offending keyword in the file.
func TestLintMapsSchemaErrorsToLines(t *testing.T) {
	src := `collections:
  users:
    validator:
      $jsonSchema:
        bsonType: object
        properties:
          age: {type: integer}
          email: {bsonType: string, format: email}
`
	fsys := fstest.MapFS{
		"0001_users.yaml":  {Data: []byte(src)},
		"0002_broken.yaml": {Data: []byte("collections:\n  users:\n    validationAction: block\n")},
	}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || r.Errors != 3 {
		t.Fatalf("want 3 errors, got %d: %+v", r.Errors, r.Problems)
	}
	want := []struct {
		loc, coll, msgPart string
	}{
		{"0001_users.yaml:7:23", "users", "validator /properties/age/type: MongoDB does not support type: integer"},
		{"0001_users.yaml:8:45", "users", "validator /properties/email/format: MongoDB does not support format"},
	}
	found := 0
	for _, w := range want {
		for _, p := range r.Problems {
			if p.Location() == w.loc && p.Collection == w.coll && strings.Contains(p.Message, w.msgPart) {
				found++
			}
		}
	}
	if found != len(want) {
		t.Errorf("want problems %+v, got %+v", want, r.Problems)
	}
	if r.Problems[0].File != "0001_users.yaml" {
		t.Errorf("problems not sorted by file: first is %s", r.Problems[0].File)
	}
	// The broken file is reported too; the good file still counts as parsed.
	if len(r.Migrations) != 1 || r.Migrations[0].Version != 1 {
		t.Errorf("parsed migrations = %+v", r.Migrations)
	}
}

func TestLintEmptyDirectoryWarns(t *testing.T) {
	r, err := lint.Lint(fstest.MapFS{"README.md": {Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Warnings != 1 {
		t.Fatalf("want one warning and no error, got %+v", r)
	}
}

func TestLintExamples(t *testing.T) {
	src := `collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
      - func: splitName
  posts:
    indexes: {create: [{keys: {a: 1}}]}
    examples:
      - before: {a: 1}
        after: {a: 1}
`
	bad := `collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active, score: 1}
    examples:
      - before: {name: Ada, email: a@x}
        after: {status: active, name: Ada, contact: {email: a@x}, score: 1}
      - before: {name: Ada, email: a@x, status: gone}
        after: {name: Ada, contact: {mail: a@x}, status: active, score: 1.0, version: 9}
      - before: {email: a@x, contact: x}
        after: {}
`
	withFunc := strings.Replace(src, "    upgrade:", "    examples:\n      - before: {email: e}\n        after: {contact: {email: e}, status: active}\n    upgrade:", 1)
	r, err := lint.Lint(fstest.MapFS{"0001_a.yaml": {Data: []byte(withFunc)}, "0002_b.yaml": {Data: []byte(bad)}})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range r.Problems {
		msgs = append(msgs, p.Location()+": "+string(p.Severity)+": "+p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"0001_a.yaml:4:9: warning: example 1 not checked",
		"0001_a.yaml step 3 (func): upgrade function not registered: splitName",
		"0002_b.yaml:9:9: error: example 2: upgrade(before) differs from after:\n      + contact.email: \"a@x\" (unexpected)\n      - contact.mail: \"a@x\" (expected, missing)\n      ~ score: got 1, expected 1.0\n      ~ status: got \"gone\", expected \"active\"",
		"0002_b.yaml:11:9: error: example 3: the upgrade fails on before: upgrade users document (no _id) from version 1: 0002_b.yaml step 1 (rename): path \"contact.email\": cannot create field \"email\" in element {contact: a string}",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint output lacks\n%s\ngot:\n%s", want, all)
		}
	}
	if strings.Contains(all, "example 1: upgrade") || strings.Contains(all, "posts") {
		t.Errorf("a correct example was reported:\n%s", all)
	}
	if r.Errors != 2 || r.Warnings != 1 {
		t.Errorf("errors %d warnings %d", r.Errors, r.Warnings)
	}
}

func TestLintExampleMustBeValidAndClosedSchemas(t *testing.T) {
	src := `collections:
  orders:
    validator:
      $jsonSchema:
        bsonType: object
        additionalProperties: false
        required: [qty]
        properties:
          qty: {bsonType: int, minimum: 1}
          currency: {enum: [EUR]}
    upgrade:
      - default: {currency: USD}
    examples:
      - before: {qty: 0}
        after: {qty: 0, currency: USD}
`
	r, err := lint.Lint(fstest.MapFS{"0001_orders.yaml": {Data: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range r.Problems {
		all = append(all, p.Location()+": "+string(p.Severity)+": "+p.Message)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		`0001_orders.yaml:6:31: warning: the validator has additionalProperties: false but does not list "_id" under properties: MongoDB refuses every document`,
		`0001_orders.yaml:6:31: warning: the validator has additionalProperties: false but does not list "version" under properties`,
		"0001_orders.yaml:14:9: error: example 1: after fails the validator of migration 1:\n      qty: minimum: must be >= 1, found 0\n      currency: enum: must be one of [\"EUR\"], found \"USD\"\n      version: additionalProperties: is not allowed (additionalProperties: false), found 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lint lacks\n%s\ngot\n%s", want, got)
		}
	}
}

// TestLintWarnsUniqueIndexOnMissingField: a unique index on a field the
// same migration's upgrade creates, or that the validator does not require,
// fails to build on MongoDB as soon as two documents lack the field (both
// index as null); lint warns and suggests sparse.
func TestLintWarnsUniqueIndexOnMissingField(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_users.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [email]}}
    indexes:
      create:
        - {keys: {email: 1}, unique: true}
        - {keys: {nick: 1}, unique: true}
        - {keys: {phone: 1}, unique: true, sparse: true}
`)},
		"0002_contact.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [contact], properties: {contact: {bsonType: object, required: [email]}}}}
    upgrade:
      - rename: {email: contact.email}
    indexes:
      create:
        - {keys: {contact.email: 1}, unique: true}
`)},
	}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Location()+" "+p.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"0001_users.yaml:7:11 unique index nick_1: the validator does not require nick",
		"0002_contact.yaml:8:11 unique index contact.email_1: this migration's upgrade creates contact.email",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "email_1: the validator") || strings.Contains(all, "phone_1") {
		t.Errorf("lint warned about a required or sparse index:\n%s", all)
	}
	if r.Warnings != 2 || r.Errors != 0 {
		t.Errorf("%d errors, %d warnings, want 0 and 2:\n%s", r.Errors, r.Warnings, all)
	}
}

// TestLintRefusesStepsOnTheVersionField: lint refuses a step that writes
// the version field under the name the registry is given
// (version.WithField), at its line and column, and the same step on a
// field that is not the version field is fine (`set: {version: 7}`
// used to lint clean and the backfill stamped 2).
func TestLintRefusesStepsOnTheVersionField(t *testing.T) {
	fsys := fstest.MapFS{"0001_a.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - set: {_v: 7, version: 7}\n")}}
	r, err := lint.Lint(fsys, version.WithField("_v"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 1 || r.Problems[0].Location() != "0001_a.yaml:4:15" || !strings.Contains(r.Problems[0].Message, `cannot write "_v"`) || r.Problems[0].Hint == "" {
		t.Errorf("got %+v, want one error at 0001_a.yaml:4:15 for _v, with a hint", r.Problems)
	}
	if r, err := lint.Lint(fsys, version.WithField("v2")); err != nil || !r.OK() {
		t.Errorf("with another version field: %+v, %v", r, err)
	}
}
