package runner

import (
	"fmt"

	"github.com/mongomig/mongomig/internal/cmddoc"
)

// RevertStoppedError is a revert that stopped part-way: the migration
// stays recorded as applied, and a later down resumes it.
type RevertStoppedError = cmddoc.RevertStoppedError

// PartwayError is a revert of File refused (nothing changed) because
// Count documents of Collection are partway through an interrupted
// server-side backfill: their Field holds a backfill's marker, and a
// backfill of Collection finishes them. It wraps [ErrPartway].
type PartwayError struct {
	File, Collection, Field string
	Count                   int64
}

func (e *PartwayError) Error() string {
	return e.Message("a backfill of " + e.Collection + " finishes them")
}

// Message is the error's message with next (what finishes the documents)
// before ", then down".
func (e *PartwayError) Message(next string) string {
	return fmt.Sprintf("%v: cannot revert %s: %d %s documents are partway through an interrupted server-side backfill (their %s holds a backfill's marker); %s, then down (nothing was changed)",
		ErrPartway, e.File, e.Count, e.Collection, e.Field, next)
}

func (e *PartwayError) Unwrap() error { return ErrPartway }
