package events

import (
	"fmt"
	"time"
)

// What a backfill reports.
type (
	// BackfillBatch: after every batch (a range, on the server-side path).
	// Upgraded counts documents upgraded by this run; Total includes
	// earlier runs since the backfill to Target began; Remaining estimates
	// the documents still below Target (-1: unknown).
	BackfillBatch struct {
		Collection      string
		Target          int64
		Upgraded, Total int64
		Remaining       int64
		Elapsed         time.Duration
	}
	// BackfillUnguarded: the run was told no application writes the
	// collection (backfill.Options.AssumeNoWriters), so its writes are
	// filtered on _id alone; Reason says what the server would cost or
	// lack otherwise ("" when nothing).
	BackfillUnguarded struct{ Reason string }
	// BackfillGuardScans: the backfill's writes are guarded, but the
	// server evaluates each guard by scanning the collection and applies
	// it after a separate read (Reason: FerretDB v1).
	BackfillGuardScans struct{ Reason string }
	// BackfillSlowIDs: the server cannot find Collection's documents by
	// _id through an index for their type (IDType), so every write by _id
	// reads the whole collection.
	BackfillSlowIDs struct{ Collection, IDType string }
	// RangeLeaseLost: a worker lost the lease of the range it walked and
	// goes on with the others.
	RangeLeaseLost struct {
		Collection string
		Range      int
		Err        error
	}
)

func (BackfillBatch) Kind() string            { return "backfill.batch" }
func (BackfillUnguarded) Kind() string        { return "backfill.unguarded" }
func (BackfillGuardScans) Kind() string       { return "backfill.guardScans" }
func (BackfillGuardScans) Severity() Severity { return Warning }
func (BackfillSlowIDs) Kind() string          { return "backfill.slowIds" }
func (RangeLeaseLost) Kind() string           { return "backfill.rangeLeaseLost" }
func (BackfillBatch) Severity() Severity      { return Info }
func (BackfillUnguarded) Severity() Severity  { return Warning }
func (BackfillSlowIDs) Severity() Severity    { return Warning }
func (RangeLeaseLost) Severity() Severity     { return Notice }
func (e BackfillBatch) String() string {
	return fmt.Sprintf("%s: %d documents upgraded to version %d (%d in all)", e.Collection, e.Upgraded, e.Target, e.Total)
}
func (e BackfillUnguarded) String() string { return e.Message("") }

// Message is the entry's text with how (" (the flag that told it)", as
// the renderer words it) after "it was told no application writes the
// collection".
func (e BackfillUnguarded) Message(how string) string {
	s := "backfill writes each upgrade filtered on _id alone, not on the old values it replaces, because it was told no application writes the collection" + how + ": an application write landing between the backfill's read and its write would be overwritten"
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}
func (e BackfillGuardScans) String() string {
	return e.Message("a backfill told so writes by _id alone")
}

// Message is the entry's text ending with unguarded (how a backfill writes
// by _id alone, as the renderer words it) after "only if no application
// writes the collection, ".
func (e BackfillGuardScans) Message(unguarded string) string {
	return "backfill guards every write on the old values it replaces, but " + e.Reason +
		": each guarded write costs a collection scan, and a guard checked before a separate write narrows the window for a concurrent application write without closing it; only if no application writes the collection, " + unguarded
}
func (e BackfillSlowIDs) String() string {
	return fmt.Sprintf("%s: its _ids are of type %s (as the first stored document's), which FerretDB v1 cannot look up through an index (it does so only for string and ObjectId _ids): each write by _id reads the whole collection, so the backfill slows as the collection grows (see docs/sandbox.md)",
		e.Collection, e.IDType)
}
func (e RangeLeaseLost) String() string {
	return fmt.Sprintf("backfill of %s: range %d: %v; this worker wrote nothing more in it and goes on with the other ranges; whoever takes the range next resumes from its checkpoint", e.Collection, e.Range, e.Err)
}
