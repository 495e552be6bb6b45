package lint

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mongomig/mongomig/pkg/validator"
)

// What an example's error quotes, cut as docs/file-format.md promises: a
// value to its first line and maxQuoted characters, and at most
// maxExampleLines differences or validator failures, then a count of the
// rest (a 300 KB document and 5,000 differing fields were echoed whole).
const (
	maxQuoted       = 80
	maxExampleLines = 20
)

// cut is s cut to its first line and maxQuoted characters, "..." marking
// a cut.
func cut(s string) string {
	cutAt := false
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cutAt = s[:i], true
	}
	if utf8.RuneCountInString(s) > maxQuoted {
		s, cutAt = string([]rune(s)[:maxQuoted]), true
	}
	if cutAt {
		s += "..."
	}
	return s
}

// firstLines is lines cut to maxExampleLines, the last saying how many
// more there are.
func firstLines(lines []string) []string {
	if len(lines) <= maxExampleLines {
		return lines
	}
	more := len(lines) - (maxExampleLines - 1)
	return append(lines[:maxExampleLines-1:maxExampleLines-1], fmt.Sprintf("... and %d more", more))
}

// failureLine is a validator failure with its path and the value found
// cut.
func failureLine(f validator.Failure) string {
	f.Path, f.Found = cut(f.Path), cut(f.Found)
	return f.String()
}
