package lint_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
)

// TestLintWarnsUnsetComments: the new user's blog with migration 2 only
// `unset: [comments]` gets a warning naming file:line, the collection and
// the field; `discard: true` silences it.
func TestLintWarnsUnsetComments(t *testing.T) {
	r, err := lint.Lint(fixtures.BlogUnsetFS(false))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Warnings != 1 || len(r.Problems) != 1 {
		t.Fatalf("want one warning, got %+v", r.Problems)
	}
	p := r.Problems[0]
	if p.Severity != lint.SeverityWarning || p.Location() != "0002_comments_collection.yaml:5:17" || p.Collection != "posts" {
		t.Errorf("problem = %+v", p)
	}
	if !strings.Contains(p.Message, "posts: unset comments removes the value documents hold there, and no earlier step of this migration keeps it") ||
		!strings.Contains(p.Hint, "add `discard: true` to the step") {
		t.Errorf("message %q hint %q", p.Message, p.Hint)
	}
	r, err = lint.Lint(fixtures.BlogUnsetFS(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 {
		t.Errorf("with discard: true: %+v", r.Problems)
	}
}

// TestLintDiscardKept: a copy of the field earlier in the same upgrade
// keeps the data (no warning); a set of a field the validator before
// declares an array warns, one of a scalar field does not.
func TestLintDiscardKept(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_posts.yaml": {Data: []byte(fixtures.BlogUnsetPostsFile)},
		"0002_keep.yaml":  {Data: []byte("collections:\n  posts:\n    upgrade:\n      - copy: {comments: archived.comments}\n      - unset: [comments]\n")},
		"0003_set.yaml":   {Data: []byte("collections:\n  posts:\n    upgrade:\n      - set: {comments: [], title: untitled}\n")},
	}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 {
		t.Fatalf("want one warning, got %+v", r.Problems)
	}
	if p := r.Problems[0]; p.Location() != "0003_set.yaml:4:15" || !strings.Contains(p.Message, "posts: set comments replaces what documents hold there (the validator before migration 3 declares it an array)") {
		t.Errorf("problem = %+v", p)
	}
}

// TestDiscardingRefusesPending: what lint warns about, up refuses.
func TestDiscardingRefusesPending(t *testing.T) {
	ms, err := migration.Load(fixtures.BlogUnsetFS(false))
	if err != nil {
		t.Fatal(err)
	}
	if r := lint.Discarding(ms, ms[:1]); !r.OK() {
		t.Errorf("migration 1 alone: %+v", r.Problems)
	}
	r := lint.Discarding(ms, ms)
	if r.OK() || r.Errors != 1 || r.Problems[0].Location() != "0002_comments_collection.yaml:5:17" {
		t.Errorf("report = %+v", r)
	}
}
