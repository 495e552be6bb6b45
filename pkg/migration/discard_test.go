package migration_test

import (
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// blogUnset is the new user's migration 2 without its extract: posts lose
// their embedded comments and nothing keeps them.
const blogUnset = `description: Comments move to their own collection.
collections:
  posts:
    upgrade:
      - unset: [comments]
`

func TestDiscardsUnsetIsUnguarded(t *testing.T) {
	m, err := migration.Parse("0002_comments.yaml", []byte(blogUnset))
	if err != nil {
		t.Fatal(err)
	}
	ds := migration.Discards(m)
	if len(ds) != 1 {
		t.Fatalf("discards = %+v, want one", ds)
	}
	d := ds[0]
	if d.Collection != "posts" || d.Path != "comments" || d.Op != migration.OpUnset || d.Step != 0 || d.Migration != 2 {
		t.Errorf("discard = %+v", d)
	}
	if d.Pos.Line != 5 || d.Pos.Column != 17 {
		t.Errorf("pos = %+v, want 5:17 (the operand)", d.Pos)
	}
	if d.Guarded() || !d.Always() {
		t.Errorf("guarded %v always %v, want an unguarded unset", d.Guarded(), d.Always())
	}
}

func TestDiscardTrueGuards(t *testing.T) {
	src := strings.Replace(blogUnset, "      - unset: [comments]\n", "      - unset: [comments]\n        discard: true\n", 1)
	m, err := migration.Parse("0002_comments.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Collections[0].Upgrade[0].Discard {
		t.Fatal("Step.Discard not set")
	}
	if ds := migration.Discards(m); len(ds) != 1 || !ds[0].Allowed || !ds[0].Guarded() {
		t.Errorf("discards = %+v, want one allowed", ds)
	}
}

// A copy (or rename) of the field, or of a field containing it, earlier
// in the same upgrade keeps the data: the unset is guarded. A copy after
// the unset, or of a field inside it, is not.
func TestKeptElsewhere(t *testing.T) {
	cases := []struct {
		steps string
		kept  bool
	}{
		{"      - copy: {comments: archive.comments}\n      - unset: [comments]\n", true},
		{"      - rename: {comments: oldComments}\n      - unset: [comments]\n", true},
		{"      - copy: {meta: archive}\n      - unset: [meta.comments]\n", true},
		{"      - copy: {comments.0: first}\n      - unset: [comments]\n", false},
		{"      - unset: [comments]\n      - copy: {comments: archive}\n", false},
		{"      - copy: {other: archive}\n      - unset: [comments]\n", false},
	}
	for _, c := range cases {
		src := "collections:\n  posts:\n    upgrade:\n" + c.steps
		m, err := migration.Parse("0002_a.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		ds := migration.Discards(m)
		if len(ds) != 1 {
			t.Fatalf("%s: discards = %+v", c.steps, ds)
		}
		if got := ds[0].Kept != nil; got != c.kept {
			t.Errorf("%s: kept = %v, want %v", c.steps, got, c.kept)
		}
	}
}

func TestDiscardKeyRejects(t *testing.T) {
	const head = "collections:\n  posts:\n"
	cases := []struct{ name, src, want string }{
		{"on a default", head + "    upgrade:\n      - default: {a: 1}\n        discard: true\n", "0001_a.yaml:5:9: discard on a default step; remove it: only unset and set steps can discard"},
		{"on a downgrade", head + "    downgrade:\n      - unset: [a]\n        discard: true\n", "0001_a.yaml:5:9: discard on a downgrade step"},
		{"not a boolean", head + "    upgrade:\n      - unset: [a]\n        discard: yes please\n", "0001_a.yaml:5:18: discard must be a boolean"},
		{"alone", head + "    upgrade:\n      - discard: true\n", "0001_a.yaml:4:9: upgrade step 1 is empty"},
		{"with two operations", head + "    upgrade:\n      - {unset: [a], set: {b: 1}, discard: true}\n", "upgrade step 1 has 2 operations"},
	}
	for _, c := range cases {
		_, err := migration.Parse("0001_a.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want %q", c.name, err, c.want)
		}
	}
}
