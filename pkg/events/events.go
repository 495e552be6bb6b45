// Package events is what mongomig's libraries report while they work: one
// [Logger] interface receiving typed entries ([LockWaiting],
// [MigrationStarted], [CommandSent], [WindowClosed], [BackfillBatch],
// [RangeLeaseLost], ...), each with its data, a [Severity] and a one-line
// wording. Libraries never print: a command line renders the entries (as
// text or JSON lines), a service logs them. It imports nothing of
// mongomig's.
package events

import (
	"fmt"
	"time"
)

// Severity orders entries for a renderer: Info is progress, Notice is
// worth a user's eye, Warning says a guarantee is weaker than usual.
type Severity int

// Severities.
const (
	Info Severity = iota
	Notice
	Warning
)

func (s Severity) String() string {
	return [...]string{"info", "notice", "warning"}[s]
}

// Entry is one thing that happened.
type Entry interface {
	// Kind names the entry's type in JSON output ("lock.waiting").
	Kind() string
	Severity() Severity
	// String words the entry in one line.
	String() string
}

// Logger receives entries. Implementations must be safe for concurrent
// use: a parallel backfill logs from several goroutines.
type Logger interface {
	Log(Entry)
}

// LoggerFunc is a function used as a Logger.
type LoggerFunc func(Entry)

// Log calls f(e).
func (f LoggerFunc) Log(e Entry) { f(e) }

// Discard drops every entry.
var Discard Logger = LoggerFunc(func(Entry) {})

// Lease states; Text is the lease package's wording.
type (
	// LockWaiting: another process holds the lease; Holder says who.
	LockWaiting struct{ Lease, Holder, Text string }
	// LockAcquired: the lease is this process's.
	LockAcquired struct{ Lease, Text string }
	// LockTakenOver: an expired lease was removed before acquiring it.
	LockTakenOver struct{ Lease, Holder, Text string }
	// LockReleased: the lease was given up.
	LockReleased struct{ Lease, Text string }
	// LedgerFenceOnly: the server has no transactions, so ledger writes
	// are fenced by the lease's clock only.
	LedgerFenceOnly struct{}
)

func (LockWaiting) Kind() string       { return "lock.waiting" }
func (LockAcquired) Kind() string      { return "lock.acquired" }
func (LockTakenOver) Kind() string     { return "lock.takenOver" }
func (LockReleased) Kind() string      { return "lock.released" }
func (LedgerFenceOnly) Kind() string   { return "ledger.timeFenceOnly" }
func (LockWaiting) Severity() Severity { return Notice }
func (LockAcquired) Severity() Severity {
	return Info
}
func (LockTakenOver) Severity() Severity   { return Notice }
func (LockReleased) Severity() Severity    { return Info }
func (LedgerFenceOnly) Severity() Severity { return Notice }
func (e LockWaiting) String() string       { return e.Text }
func (e LockAcquired) String() string      { return e.Text }
func (e LockTakenOver) String() string     { return e.Text }
func (e LockReleased) String() string      { return e.Text }
func (LedgerFenceOnly) String() string {
	return "the server has no transactions (standalone or FerretDB): the ledger write is fenced by the lease's clock only, not tied to the lock by a transaction"
}

// A migration applied or reverted.
type (
	// MigrationStarted: a migration begins (Direction "up" or "down").
	MigrationStarted struct {
		Version   int64
		File      string
		Direction string
	}
	// MigrationDone: a migration was applied or reverted.
	MigrationDone struct {
		Version   int64
		File      string
		Direction string
		Took      time.Duration
	}
)

func (MigrationStarted) Kind() string       { return "migration.start" }
func (MigrationDone) Kind() string          { return "migration.done" }
func (MigrationStarted) Severity() Severity { return Info }
func (MigrationDone) Severity() Severity    { return Info }
func (e MigrationStarted) String() string {
	if e.Direction == "down" {
		return "reverting " + e.File
	}
	return "applying " + e.File
}
func (e MigrationDone) String() string {
	if e.Direction == "down" {
		return "reverted " + e.File
	}
	return fmt.Sprintf("applied %s in %v", e.File, e.Took.Round(time.Millisecond))
}

// Commands.
type (
	// CommandSent: a command succeeded; Summary describes it.
	CommandSent struct {
		Version             int64
		File                string
		Collection, Command string
		Summary             string
	}
	// CommandSkipped: a command was unnecessary (an index already absent).
	CommandSkipped struct {
		Version             int64
		File                string
		Collection, Command string
		Summary, Why        string
	}
	// ValidatorClientSide: the server refused a validator; mongomig
	// enforces it client-side only.
	ValidatorClientSide struct {
		Version             int64
		File                string
		Collection, Command string
		Why                 string
	}
	// DriftAccepted: an edited applied file was accepted (and recorded).
	DriftAccepted struct {
		Version int64
		File    string
	}
	// WindowClosed: the validator window of Collection was closed.
	WindowClosed struct{ Collection string }
)

func (CommandSent) Kind() string               { return "command" }
func (CommandSkipped) Kind() string            { return "command.skipped" }
func (ValidatorClientSide) Kind() string       { return "validator.clientSideOnly" }
func (DriftAccepted) Kind() string             { return "drift.accepted" }
func (WindowClosed) Kind() string              { return "window.closed" }
func (CommandSent) Severity() Severity         { return Info }
func (CommandSkipped) Severity() Severity      { return Info }
func (ValidatorClientSide) Severity() Severity { return Warning }
func (DriftAccepted) Severity() Severity       { return Notice }
func (WindowClosed) Severity() Severity        { return Info }
func (e CommandSent) String() string           { return e.Collection + ": " + e.Summary }
func (e CommandSkipped) String() string        { return e.Collection + ": " + e.Summary + ": " + e.Why }
func (e ValidatorClientSide) String() string   { return e.Collection + ": " + e.Why }
func (e DriftAccepted) String() string {
	return fmt.Sprintf("%s: edit accepted; recorded in the ledger", e.File)
}
func (e WindowClosed) String() string {
	return e.Collection + ": validator window closed (no document below the current version remains)"
}

// Documents downgraded by down.
type (
	// DocumentsDowngraded: a collection's documents were downgraded;
	// Reread counts those another writer changed between down's read and
	// its write (read and downgraded again).
	DocumentsDowngraded struct {
		Version          int64
		File, Collection string
		From, To         int64
		Count, Reread    int64
	}
	// DowngradeProgress: after every batch of down's document pass.
	DowngradeProgress struct {
		Version          int64
		File, Collection string
		From, To         int64
		Count, Total     int64
		Rate             float64 // documents per second
	}
	// DownGuardScans: the server evaluates down's guarded writes by
	// scanning the collection, so the pass is slow; sent once.
	DownGuardScans struct {
		Total  int64
		Reason string
	}
)

func (DocumentsDowngraded) Kind() string       { return "documents" }
func (DowngradeProgress) Kind() string         { return "documents.progress" }
func (DownGuardScans) Kind() string            { return "down.guardScans" }
func (DocumentsDowngraded) Severity() Severity { return Info }
func (DowngradeProgress) Severity() Severity   { return Info }
func (DownGuardScans) Severity() Severity      { return Warning }
func (e DocumentsDowngraded) String() string {
	msg := fmt.Sprintf("%s: %d documents downgraded from version %d to %d", e.Collection, e.Count, e.From, e.To)
	if e.Reread > 0 {
		msg += fmt.Sprintf(" (%d changed by another writer between down's read and its write: that write left them alone, and they were read and downgraded again)", e.Reread)
	}
	return msg
}
func (e DowngradeProgress) String() string {
	msg := fmt.Sprintf("%s: %d of %d documents downgraded from version %d to %d, %.0f docs/s", e.Collection, e.Count, e.Total, e.From, e.To, e.Rate)
	if left := e.Total - e.Count; left > 0 && e.Rate > 0 {
		eta := time.Duration(float64(left) / e.Rate * float64(time.Second)).Round(time.Second)
		msg += fmt.Sprintf(", %d left, ETA %s", left, eta)
	}
	return msg
}
func (e DownGuardScans) String() string {
	return fmt.Sprintf("down downgrades %d documents, each written filtered on _id and the values it read of the fields its downgrade reads and changes, so that an application write made since down read the document is not overwritten (the lock keeps other mongomig runs out, not the application): %s, so each write scans its collection and down is slow here; the guards stay, progress follows",
		e.Total, e.Reason)
}
