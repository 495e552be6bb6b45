package migration_test

import (
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestExtractKeepsTheArray: an extract of posts.comments keeps the data an
// unset of comments (or of a field inside it) in the same migration
// removes; an extract of another array, or from another collection, does
// not.
func TestExtractKeepsTheArray(t *testing.T) {
	const file = blogUnset + `      - unset: [comments.0.by, tags]
  drafts:
    upgrade:
      - unset: [comments]
run:
  - extract: {from: posts, array: comments, to: comments, ref: postId}
`
	m, err := migration.Parse("0002_comments.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, d := range migration.Discards(m) {
		kept[d.Collection+"."+d.Path] = d.Kept != nil
		if d.Kept != nil && (d.Kept.Op != migration.OpExtract || d.Kept.To != "comments" || d.Kept.Pos.Line != 11) {
			t.Errorf("%s.%s kept by %+v, want the extract at line 11", d.Collection, d.Path, d.Kept)
		}
	}
	want := map[string]bool{"posts.comments": true, "posts.comments.0.by": true, "posts.tags": false, "drafts.comments": false}
	for k, w := range want {
		if g, ok := kept[k]; !ok || g != w {
			t.Errorf("%s: kept %v (listed %v), want %v", k, g, ok, w)
		}
	}
}
