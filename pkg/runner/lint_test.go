package runner_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/runner"
)

func TestLintSamplesAreClean(t *testing.T) {
	r, err := runner.Lint(os.DirFS("../../migrations"))
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
	r, err := runner.Lint(fsys)
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
	r, err := runner.Lint(fstest.MapFS{"README.md": {Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Warnings != 1 {
		t.Fatalf("want one warning and no error, got %+v", r)
	}
}
