package lint_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
)

// exampleProblems lints one migration holding src and returns its
// problems' text, message and hint.
func exampleProblems(t *testing.T, src string) string {
	t.Helper()
	fsys := migration.WithLimits(fstest.MapFS{"0001_a.yaml": {Data: []byte(src)}}, migration.Limits{MaxFileSize: 8 << 20})
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors == 0 {
		t.Fatalf("no error: %+v", r.Problems)
	}
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.Message + "; " + p.Hint + "\n")
	}
	return b.String()
}

// TestExampleErrorsAreCut: an example's error quoted
// whole values (a 304 KB `got {...}` hint) and every difference (5,000
// lines); now each value is cut to its first line and 80 characters and at
// most 20 lines are listed, the last counting the rest, as
// docs/file-format.md promises.
func TestExampleErrorsAreCut(t *testing.T) {
	big := strings.Repeat("x", 300_000)
	src := "collections:\n  users:\n    upgrade:\n      - set: {note: \"" + big + "\"}\n" +
		"    examples:\n      - before: {name: \"" + big + "\"}\n        after: {name: \"" + big + "y\", note: \"" + big + "\"}\n"
	got := exampleProblems(t, src)
	if len(got) > 2000 {
		t.Errorf("the error is %d bytes: %.300q...", len(got), got)
	}
	if !strings.Contains(got, `~ name: got "xxxxxxxx`) || !strings.Contains(got, "...") {
		t.Errorf("the difference is not shown cut: %.500q", got)
	}

	var after strings.Builder
	after.WriteString("{")
	for i := range 5000 {
		fmt.Fprintf(&after, "f%04d: %d, ", i, i)
	}
	after.WriteString("a: 1}")
	src = "collections:\n  users:\n    upgrade:\n      - set: {a: 1}\n    examples:\n      - before: {}\n        after: " + after.String() + "\n"
	got = exampleProblems(t, src)
	if n := strings.Count(got, "\n      "); n != 20 {
		t.Errorf("%d difference lines listed, want 20 (19 and a count):\n%.2000s", n, got)
	}
	if !strings.Contains(got, "... and 4981 more") {
		t.Errorf("no count of the differences left out:\n%.2000s", got)
	}

	// A validator failure quotes the value found, cut.
	src = "collections:\n  users:\n    validator:\n      $jsonSchema: {properties: {name: {maxLength: 3}}}\n" +
		"    examples:\n      - before: {name: \"" + big + "\"}\n        after: {name: \"" + big + "\"}\n"
	if got = exampleProblems(t, src); len(got) > 1000 {
		t.Errorf("the validator failure is %d bytes: %.300q...", len(got), got)
	}
}
