package cli

import (
	"bytes"
	"testing"

	"github.com/mongomig/mongomig/pkg/integrity"
)

// TestRenderApplied: a followed event that needed fixes is one line and
// the fixes as repair words them; one that needed none prints nothing.
func TestRenderApplied(t *testing.T) {
	var b bytes.Buffer
	o := &output{out: &b}
	renderApplied(o, &integrity.Applied{Operation: "update", Collection: "comments", ID: "104", Fixes: []integrity.Fix{}})
	if b.Len() != 0 {
		t.Errorf("an event without fixes printed %q", b.String())
	}
	renderApplied(o, &integrity.Applied{Operation: "insert", Collection: "comments", ID: "104",
		Fixes:      []integrity.Fix{{Rule: "posts.commentCount = count(comments by postId)", ID: `"b"`, Path: "commentCount", Wrong: "4", Right: "3", Outcome: integrity.OutcomeFixed}},
		Propagated: []integrity.Propagated{{Modified: 2}}})
	want := "follow: insert comments _id 104: 2 copies propagated, 1 fix\n" +
		"  posts.commentCount = count(comments by postId) _id \"b\" commentCount: 4 -> 3: fixed\n"
	if b.String() != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", b.String(), want)
	}
}
