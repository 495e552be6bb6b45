package migration

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// byteOrderMarks are the marks of the encodings YAML reads besides UTF-8,
// longest first (UTF-32LE's mark begins with UTF-16LE's).
var byteOrderMarks = []struct {
	mark []byte
	name string
}{
	{[]byte{0xff, 0xfe, 0, 0}, "UTF-32 (little-endian)"},
	{[]byte{0, 0, 0xfe, 0xff}, "UTF-32 (big-endian)"},
	{[]byte{0xff, 0xfe}, "UTF-16 (little-endian)"},
	{[]byte{0xfe, 0xff}, "UTF-16 (big-endian)"},
}

// reviewHint says why a file must be UTF-8 text and how to make it so.
const reviewHint = "git shows such a file as binary, so a review cannot see what it does: save it as UTF-8 text (iconv -f UTF-16 -t UTF-8 FILE for UTF-16)"

// checkText refuses a file that is not UTF-8 text: one with a UTF-16 or
// UTF-32 byte-order mark (the YAML library would decode it, while git and
// code review show it as binary), a NUL byte (UTF-16 or UTF-32 without a
// mark, or binary), a byte that is not UTF-8, or a character YAML does not
// allow in a file (other control characters), naming where.
func (p *parser) checkText(data []byte) bool {
	for _, bom := range byteOrderMarks {
		if bytes.HasPrefix(data, bom.mark) {
			p.add(Pos{Line: 1, Column: 1}, reviewHint, "file is encoded as %s, not UTF-8", shown(bom.name))
			return false
		}
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		p.add(p.posAt(data, i), reviewHint, "file holds a NUL byte: it is not UTF-8 text (UTF-16 or UTF-32 without a byte-order mark, or binary)")
		return false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			p.add(p.posAt(data, i), "save the file as UTF-8 (iconv -f LATIN1 -t UTF-8 FILE for Latin-1)",
				"byte 0x%02X is not UTF-8: the file must be UTF-8 text", data[i])
			return false
		case !yamlPrintable(r):
			p.add(p.posAt(data, i), "remove it, or write it as an escape inside a double-quoted string (\"\\u001b\")",
				"control character %s is not allowed in a file", shown(fmt.Sprintf("U+%04X", r)))
			return false
		}
		i += size
	}
	return true
}

// posAt is the 1-based line and column (in bytes) of data[off].
func (p *parser) posAt(data []byte, off int) Pos {
	line, col := lineCol(data, off+1)
	return Pos{Line: line, Column: col}
}

// yamlPrintable reports whether YAML 1.2 allows r in a stream (its
// c-printable production, plus the byte-order mark it skips).
func yamlPrintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20 || r == 0x7f:
		return false
	case r >= 0x80 && r <= 0x9f:
		return r == 0x85
	case r == 0xfffe || r == 0xffff:
		return false
	}
	return true
}
