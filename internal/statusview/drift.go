package statusview

import (
	"fmt"
	"strings"
)

// DriftError lists applied migrations whose file changed or disappeared.
type DriftError struct {
	Drifted []MigrationStatus
}

func (e *DriftError) Error() string { return e.Message("", "accept it") }

// Message is the error's message with the caller's words for the two ways
// out of an edit: create (after "put the change in a new migration", such
// as " (the command that writes one)") and accept ("accept it", or
// the flag that does).
func (e *DriftError) Message(create, accept string) string {
	var lines []string
	for _, m := range e.Drifted {
		switch m.State {
		case StateMissing:
			lines = append(lines, fmt.Sprintf("migration %d (%s) is applied but its file is gone; restore it from version control", m.Version, m.File))
		default:
			lines = append(lines, fmt.Sprintf("%s was edited after it was applied (ledger %s, file %s); revert the edit and put the change in a new migration%s, or %s if the edit changes nothing the database sees",
				m.File, short(m.LedgerChecksum), short(m.Checksum), create, accept))
		}
	}
	return "drift: " + strings.Join(lines, "; ")
}

func short(sum string) string {
	if len(sum) > 19 {
		return sum[:19]
	}
	return sum
}

// Drift refuses, with a [*DriftError], the applied migrations of rows
// whose file was edited or removed, unless allow; with needFiles a
// removed file is refused even then (down computes the state before a
// revert from every earlier file: without one it would strip validators
// it cannot see).
func Drift(rows []MigrationStatus, allow, needFiles bool) error {
	var drifted []MigrationStatus
	for _, m := range rows {
		switch {
		case m.State == StateMissing && needFiles:
			return &DriftError{Drifted: []MigrationStatus{m}}
		case m.State == StateDrifted || m.State == StateMissing:
			drifted = append(drifted, m)
		}
	}
	if len(drifted) > 0 && !allow {
		return &DriftError{Drifted: drifted}
	}
	return nil
}

// OrderError is a pending migration numbered below an applied one.
type OrderError struct {
	Pending, Applied int64
	File             string
}

func (e *OrderError) Error() string {
	return fmt.Sprintf("%s is pending but migration %d is already applied; renumber it after %d (and after every applied migration) so that versions only grow", e.File, e.Applied, e.Applied)
}
