package migration

import (
	"fmt"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// unprintable returns the first rune of s that is a control character
// (C0, DEL, C1) or otherwise not printable: a format character such as a
// zero-width space (U+200B) or a bidirectional override (U+202E), a
// separator other than the ASCII space. ok is false when there is none.
func unprintable(s string) (r rune, ok bool) {
	for _, r := range s {
		if r != ' ' && (unicode.IsControl(r) || !unicode.IsPrint(r)) {
			return r, true
		}
	}
	return 0, false
}

// checkPrintable refuses, as for collection names, an index name or a
// field path holding a control or non-printable character: mongomig
// prints them (plans, reports, status), where they could drive a
// terminal, forge a line of output, or make two different names look
// alike. what is "index name" or "field path".
func (p *parser) checkPrintable(n *yaml.Node, what, s string) bool {
	r, bad := unprintable(s)
	if !bad {
		return true
	}
	kind := "a non-printable character"
	if unicode.IsControl(r) {
		kind = "a control character"
	}
	p.errorf(n, "mongomig refuses control and non-printable characters (zero-width and direction marks included) in names and paths it prints: they could drive a terminal or forge a line of its output; write the real name",
		"%s %s contains %s (%s)", shown(what), shown(quoteName(s)), shown(kind), shown(fmt.Sprintf("U+%04X", r)))
	return false
}
