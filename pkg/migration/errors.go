package migration

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/internal/suggest"
)

// Pos is a position in a migration file. Line and Column start at 1; zero
// means unknown.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// IsValid reports whether p names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Error is one problem in one migration file.
type Error struct {
	// File is the file's path within the migration directory.
	File string `json:"file"`
	// Pos is where in File the problem is; zero when it concerns the
	// whole file (its name, say).
	Pos Pos `json:"pos"`
	// Msg says what is wrong.
	Msg string `json:"message"`
	// Hint says what to write instead; may be empty.
	Hint string `json:"hint,omitempty"`
}

// Location renders "file:line:column", or "file" when the position is
// unknown; a file name with control characters is quoted (see
// [DisplayName]).
func (e *Error) Location() string {
	if !e.Pos.IsValid() {
		return DisplayName(e.File)
	}
	return fmt.Sprintf("%s:%d:%d", DisplayName(e.File), e.Pos.Line, e.Pos.Column)
}

func (e *Error) Error() string {
	s := e.Location() + ": " + e.Msg
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// ErrorList is every problem found in a directory or file, sorted by file
// and position. It is what [Load] and [Parse] return when anything is wrong.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives errors.Is and errors.As access to each [*Error].
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Sort orders the list by file, line and column.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
		)
	})
}

// err returns the list as an error, or nil when it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	l.Sort()
	return l
}

// hintKeys returns `did you mean "x"?` for the known word closest to got,
// or the list of valid words when none is close.
func hintKeys(got string, known []string) string {
	if w, ok := suggest.Closest(got, known); ok {
		return fmt.Sprintf("did you mean %q?", w)
	}
	return "valid keys here: " + strings.Join(known, ", ")
}

// Hints that the tool's command line words with its commands and flags:
// the CLI renders them so (a library names no command line, since the
// binary may be a team's own).
const (
	HintFromTemplate   = "start from the template the create command writes"
	HintSmallerVersion = "use a smaller number, such as the next free one the create command picks"
	HintFileSize       = "split it into several migrations, or raise the file size limit"
)
