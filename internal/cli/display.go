package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// display returns a string that a database, a server or a file controls
// (a lease holder's host, the ledger's appliedBy, a collection, field or
// index name read from the database, a plan's note, a message) as it may
// be printed on a terminal, in one line: every control character (newline
// and tab included), format character (zero-width spaces and joiners,
// direction marks and overrides), other non-printable rune, and byte that
// is not UTF-8 is written as a Go escape (\n, \x1b, \u200b), so the string
// can neither drive the terminal nor forge a line of output. Printable
// text, non-ASCII letters included, is kept as it is. JSON output carries
// such strings as they are (JSON escapes them).
func display(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\n', '\u200b'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r may not be printed as it is: anything but
// the ASCII space and printable runes.
func unsafeRune(r rune) bool {
	return r != ' ' && (unicode.IsControl(r) || !unicode.IsPrint(r))
}

// errorText is the message of the error a failed command ends with
// (`mongomig: ...`): credentials and server internals removed, and each
// line made safe with display. A line break is kept only where the error
// is built of lines: an errors.Join or migration.ErrorList (one line per
// error), the runner's invalid-files error (a header and one line per
// problem), possibly after a prefix (fmt.Errorf("...: %w")); any other
// newline, such as one in a server's message or a name, is written \n, so
// it cannot print a line of its own.
func errorText(err error, uri string) string {
	lines := advisedLines(err)
	for i, l := range lines {
		lines[i] = display(probe.TrimServerInternals(redactErr(l, uri)))
	}
	return strings.Join(lines, "\n")
}

// lintContinuation starts the lines of a lint problem after its first
// (pkg/lint writes an example's differences that way).
const lintContinuation = "      "

// errorLines splits err's message where its structure puts line breaks.
func errorLines(err error) []string {
	msg := err.Error()
	if !strings.Contains(msg, "\n") {
		return []string{msg}
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		parts := multi.Unwrap()
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			if p != nil {
				texts = append(texts, p.Error())
			}
		}
		if strings.Join(texts, "\n") == msg {
			var lines []string
			for _, p := range parts {
				if p != nil {
					lines = append(lines, errorLines(p)...)
				}
			}
			return lines
		}
	}
	var invalid *runner.InvalidFilesError
	if errors.As(err, &invalid) && msg == invalid.Error() {
		// A header, a line per error, and the indented lines of a
		// problem that lists several (an example's differences).
		lines := strings.Split(msg, "\n")
		own := 0
		for _, l := range lines {
			if !strings.HasPrefix(l, lintContinuation) {
				own++
			}
		}
		if own == 1+invalid.Report.Errors {
			return lines
		}
	}
	if inner := errors.Unwrap(err); inner != nil && strings.HasSuffix(msg, inner.Error()) {
		lines := errorLines(inner)
		lines[0] = msg[:len(msg)-len(inner.Error())] + lines[0]
		return lines
	}
	return []string{msg} // display writes its line breaks as \n
}
