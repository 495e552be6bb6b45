package lint_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// TestLintRunOperations: an extract whose parent's upgrade unsets the
// array is an error at the unset step; a drop with allowNonEmpty a warning.
func TestLintRunOperations(t *testing.T) {
	fsys := fstest.MapFS{"0002_comments.yaml": {Data: []byte(`description: Move comments out.
collections:
  posts:
    upgrade:
      - unset: [comments]
run:
  - extract: {from: posts, array: comments, to: comments, ref: postId}
  - dropCollection: {name: drafts, allowNonEmpty: true}
`)}}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Location()+": "+p.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"0002_comments.yaml:5:9: the upgrade of posts unsets comments, which run operation 1 extracts",
		"0002_comments.yaml:8:5: run operation 2 drops drafts with whatever documents it holds",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint said\n%s\nwant %q", all, want)
		}
	}
}
