package migration

import (
	"strings"
	"testing"
)

// TestParseRun: the run: list's operations, and the errors a bad one
// gets at its line.
func TestParseRun(t *testing.T) {
	m, err := Parse("0002_x.yaml", []byte(`run:
  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: {count: commentCount}}
  - extract: {from: posts, array: tags, to: tags, ref: postId, keep: {first: 3}}
  - renameCollection: {from: a, to: b}
  - dropCollection: {name: c, allowNonEmpty: true}
  - copyCollection: {from: d, to: e}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Run) != 5 || m.Run[0].Extract.Keep != KeepCount || m.Run[0].Extract.CountField != "commentCount" ||
		m.Run[1].Extract.First != 3 || m.Run[2].To != "b" || !m.Run[3].AllowNonEmpty || m.Run[4].From != "d" || m.Run[2].Pos.Line != 4 {
		t.Fatalf("parsed %+v", m.Run)
	}
	for _, c := range []struct{ file, want string }{
		{"run:\n  - extract: {from: posts, array: comments, to: comments}\n", "2:14: extract needs ref"},
		{"run:\n  - extract: {from: posts, array: comments, to: posts, ref: postId}\n", `extract from "posts" to itself`},
		{"run:\n  - extract: {from: posts, array: comments, to: c, ref: p, keep: {first: 0}}\n", "invalid keep.first"},
		{"run:\n  - extract: {from: posts, array: comments, to: c, ref: p, keep: {count: comments.n}}\n", "inside the array"},
		{"run:\n  - dropCollection: {name: mongomig_lock}\n", "reserved for mongomig"},
		{"run:\n  - truncate: {name: x}\n", `unknown key "truncate"`},
		{"run: {}\n", "run must be a list"},
	} {
		_, err := Parse("0002_x.yaml", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}
