package migration_test

import (
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// parseError parses src as 0001_a.yaml and returns its error text.
func parseError(t *testing.T, src string) string {
	t.Helper()
	_, err := migration.Parse("0001_a.yaml", []byte(src))
	if err == nil {
		t.Fatalf("Parse(%q) accepted it", src)
	}
	return err.Error()
}

func wantIn(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("error %q lacks %q", got, w)
		}
	}
}

// utf16 is s in UTF-16, little-endian, without a byte-order mark.
func utf16(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

// TestParseRefusesNonUTF8: a UTF-16 or UTF-32 file,
// which the YAML library decoded and accepted while git shows it as
// binary (so a review sees nothing), is refused naming the encoding; so
// is a file with a NUL byte, a byte that is not UTF-8, or a control
// character YAML does not allow, each at its line and column.
func TestParseRefusesNonUTF8(t *testing.T) {
	const body = "collections:\n  users:\n    upgrade: [{unset: [isAdmin]}]\n"
	le := utf16(body)
	be := make([]byte, len(le))
	for i := 0; i < len(le); i += 2 {
		be[i], be[i+1] = le[i+1], le[i]
	}
	var utf32 []byte
	for _, r := range body {
		utf32 = append(utf32, byte(r), 0, 0, 0)
	}
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"UTF-16LE with a mark", append([]byte{0xff, 0xfe}, le...), []string{"0001_a.yaml:1:1: file is encoded as UTF-16 (little-endian), not UTF-8", "git shows such a file as binary", "save it as UTF-8"}},
		{"UTF-16BE with a mark", append([]byte{0xfe, 0xff}, be...), []string{"0001_a.yaml:1:1: file is encoded as UTF-16 (big-endian), not UTF-8"}},
		{"UTF-32LE with a mark", append([]byte{0xff, 0xfe, 0, 0}, utf32...), []string{"0001_a.yaml:1:1: file is encoded as UTF-32 (little-endian), not UTF-8"}},
		{"UTF-16LE without a mark", le, []string{"0001_a.yaml:1:2: file holds a NUL byte: it is not UTF-8 text"}},
		{"a NUL in a value", []byte("collections:\n  users: {upgrade: [{unset: [a\x00b]}]}\n"), []string{"0001_a.yaml:2:31: file holds a NUL byte"}},
		{"Latin-1", []byte("description: caf\xe9\ncollections: {}\n"), []string{"0001_a.yaml:1:17: byte 0xE9 is not UTF-8", "iconv -f LATIN1"}},
		{"an escape character", []byte("description: x\ncollections:\n  users: {upgrade: [{unset: [\x1b[31m]}]}\n"), []string{"0001_a.yaml:3:30: control character U+001B is not allowed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := migration.Parse("0001_a.yaml", c.data)
			if err == nil {
				t.Fatal("accepted")
			}
			wantIn(t, err.Error(), c.want...)
		})
	}
	// A UTF-8 byte-order mark is UTF-8: accepted.
	if _, err := migration.Parse("0001_a.yaml", append([]byte{0xef, 0xbb, 0xbf}, body...)); err != nil {
		t.Errorf("UTF-8 with a byte-order mark: %v", err)
	}
}

// TestParseRefusesTagsAndMergeKeys: a tag on a
// mapping or a list was ignored (`!!set`, `!custom` read as a plain
// mapping) and a merge key gave a confusing message; both are refused at
// their line.
func TestParseRefusesTagsAndMergeKeys(t *testing.T) {
	wantIn(t, parseError(t, "collections: !!set\n  users: {upgrade: [{unset: [a]}]}\n"),
		"0001_a.yaml:1:14: YAML tag !!set on a mapping is not supported; remove the tag")
	wantIn(t, parseError(t, "collections:\n  users:\n    upgrade: !steps\n      - unset: [a]\n"),
		"0001_a.yaml:3:14: YAML tag !steps on a list is not supported")
	wantIn(t, parseError(t, "x: &base {unset: [a]}\ncollections:\n  users:\n    upgrade:\n      - <<: *base\n"),
		`0001_a.yaml:5:9: merge key "<<" is not supported; write the keys out`)
}

// TestParseSyntaxErrorOnLineOne: the YAML library
// names no line for an error whose marks are on the first line; the
// error is placed at 1:1 instead of having no position.
func TestParseSyntaxErrorOnLineOne(t *testing.T) {
	wantIn(t, parseError(t, "collections: users: {}\n"), "0001_a.yaml:1:1: syntax error: mapping values are not allowed in this context")
	wantIn(t, parseError(t, "description: x\ncollections: {users: {upgrade: *nope}}\n"), "0001_a.yaml:2:32: syntax error: unknown anchor 'nope' referenced")
}

// TestParseRefusesUnprintableNamesAndPaths: lint
// accepted `name: "evil\e[31m\nname"`, which plans and reports then print;
// index names, index fields and step paths now follow the rule for
// collection names: no control or non-printable character (a zero-width
// space, a direction override).
func TestParseRefusesUnprintableNamesAndPaths(t *testing.T) {
	const users = "collections:\n  users:\n"
	for _, c := range []struct{ name, src, want string }{
		{"index name with an escape", users + "    indexes:\n      create:\n        - {keys: {email: 1}, name: \"evil\\e[31m\\nname\"}\n",
			`0001_a.yaml:5:36: index name "evil\x1b[31m\nname" contains a control character (U+001B); mongomig refuses control and non-printable characters`},
		{"dropped index name with a zero-width space", users + "    indexes:\n      drop: [\"email\\u200B_1\"]\n",
			`0001_a.yaml:4:14: index name "email\u200b_1" contains a non-printable character (U+200B)`},
		{"index field with a direction override", users + "    indexes:\n      create:\n        - {keys: {\"a\\u202Eb\": 1}}\n",
			`index field "a\u202eb" contains a non-printable character (U+202E)`},
		{"unset path with a newline", users + "    upgrade:\n      - unset: [\"a\\nb.yaml:1:1: error: forged\"]\n",
			`0001_a.yaml:4:17: field path "a\nb.yaml:1:1: error: forged" contains a control character (U+000A)`},
		{"rename target with a bell", users + "    upgrade:\n      - rename: {a: \"b\\a\"}\n",
			`field path "b\a" contains a control character (U+0007)`},
		{"default path with a zero-width joiner", users + "    upgrade:\n      - default: {\"is\\u200DAdmin\": false}\n",
			`field path "is\u200dAdmin" contains a non-printable character (U+200D)`},
	} {
		t.Run(c.name, func(t *testing.T) { wantIn(t, parseError(t, c.src), c.want) })
	}
	// What MongoDB and the rule allow stays accepted: spaces, accents, '$' below the top.
	if _, err := migration.Parse("0001_a.yaml", []byte(users+"    upgrade:\n      - set: {\"full name\": x, \"café.$x\": 1}\n    indexes:\n      create: [{keys: {\"full name\": 1}, name: \"par nom complet\"}]\n")); err != nil {
		t.Errorf("printable names refused: %v", err)
	}
}
