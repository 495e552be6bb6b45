// Package statusview is status's data: each migration's state against
// the ledger, each collection's declared schema state, its backfill as the
// checkpoint records it, what the next up does to it and the documents
// that should not be there (anomalies), with the rules that compute them
// from what the runner read. It reads nothing itself: pkg/runner's status
// reads the ledger, the checkpoints and the server and fills these in.
package statusview

import (
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/serverstate"
)

// Migration states in a [Status].
const (
	StateApplied = "applied"
	StatePending = "pending"
	StateDrifted = "drifted" // applied, but the file changed since
	StateMissing = "missing" // applied, but the file is gone
)

// MigrationStatus is one migration's state.
type MigrationStatus struct {
	Version        int64        `json:"version"`
	Name           string       `json:"name"`
	File           string       `json:"file"`
	State          string       `json:"state"`
	Checksum       string       `json:"checksum,omitempty"`
	LedgerChecksum string       `json:"ledgerChecksum,omitempty"`
	AppliedAt      *time.Time   `json:"appliedAt,omitempty"`
	AppliedBy      string       `json:"appliedBy,omitempty"`
	Marked         *ledger.Mark `json:"marked,omitempty"` // recorded applied by a mark (see Runner.Mark)
}

// CollectionStatus is one collection's schema state.
type CollectionStatus struct {
	Name string `json:"name"`
	// ValidatorFrom is the applied migration whose validator is in force
	// (0: none declared yet).
	ValidatorFrom int64 `json:"validatorFrom"`
	// Enforcement is "server", "client-side only" or "none" (pkg/runner's
	// Enforcement constants): "server" only when listCollections shows the
	// validator the applied migrations declare, else "absent from the
	// server" or "differs on the server", with EnforcementNote saying what
	// the server holds.
	Enforcement     string `json:"enforcement"`
	EnforcementNote string `json:"enforcementNote,omitempty"`
	Level           string `json:"validationLevel,omitempty"`
	Action          string `json:"validationAction,omitempty"`
	// CurrentVersion is the document version the applied migrations
	// upgrade to; TargetVersion the one all files upgrade to.
	CurrentVersion int64                `json:"currentVersion"`
	TargetVersion  int64                `json:"targetVersion"`
	Documents      []bsonx.VersionCount `json:"documents"`
	// Window is "open" while the validator also accepts documents below
	// CurrentVersion, "closed" once a backfill proved none remain and up
	// tightened it, "" when the collection has no versioned validator.
	Window string `json:"window,omitempty"`
	// WindowBranches says, while the window is open, what each document
	// version is checked against.
	WindowBranches []WindowBranch `json:"windowBranches,omitempty"`
	// ExtractWindows are the open extract windows (internal/window,
	// invariant 5): the validator also accepts the schema in force before
	// each one's migration, while parents may still hold the array.
	ExtractWindows []ExtractWindow `json:"extractWindows,omitempty"`
	// AboveCurrent counts the documents above CurrentVersion (with
	// StatusOptions.Counts; with Check alone, 1 when there is any): a
	// release newer than the applied migrations wrote them, or a backfill
	// ran past a down. A release running the applied files cannot read
	// them (version.TooNewError).
	AboveCurrent int64 `json:"aboveCurrent,omitempty"`
	// LevelFrom and ActionFrom are the applied migrations that declared
	// the level and action (0: none does, the collection keeps the
	// server's setting; see pkg/runner's settings.go).
	LevelFrom  int64 `json:"validationLevelFrom,omitempty"`
	ActionFrom int64 `json:"validationActionFrom,omitempty"`
	// Backfill is the backfill's checkpoint (nil: none ran).
	Backfill *BackfillStatus `json:"backfill,omitempty"`
	// NextUp says what the next `up` does to the collection ("": nothing).
	NextUp string `json:"nextUp,omitempty"`
	// Anomalies are documents that should not be there (with Counts, or
	// found with Check).
	Anomalies []Anomaly `json:"anomalies,omitempty"`
	// ServerDrift lists how the server differs from what the applied
	// migrations declare.
	ServerDrift []serverstate.Drift `json:"serverDrift,omitempty"`
}

// WindowBranch is one branch of an open validator window: documents at
// Version are checked against the validator of migration SchemaFrom (0:
// no migration describes that version, so they pass unchecked).
type WindowBranch struct {
	Version    int64 `json:"version"`
	SchemaFrom int64 `json:"schemaFrom"`
	// Unchecked: no migration declares a schema for Version (SchemaFrom
	// is 0), so its documents pass the window unchecked.
	Unchecked bool `json:"unchecked,omitempty"`
}

// BackfillStatus is a collection's backfill as its checkpoint records it.
type BackfillStatus struct {
	// Target is the document version the backfill upgrades to.
	Target int64 `json:"target"`
	// Upgraded counts the documents it upgraded, in every run (done).
	Upgraded int64 `json:"upgraded"`
	// Remaining counts the documents below the collection's current
	// version (with StatusOptions.Counts only; nil otherwise).
	Remaining *int64 `json:"remaining,omitempty"`
	// RatePerSecond is the last run's rate (0: unknown, the checkpoint
	// predates run times or the run upgraded nothing).
	RatePerSecond float64 `json:"ratePerSecond,omitempty"`
	// LastRun is when the last run saved the checkpoint.
	LastRun *time.Time `json:"lastRun,omitempty"`
	// Done: the last walk reached the end of the collection.
	Done bool `json:"done"`
	// Resumable: a walk stopped half-way (--max-time, a signal, a crash)
	// and the next backfill continues from its checkpoint.
	Resumable bool `json:"resumable"`
	// Proven: a complete walk found no document below Target, at
	// Generation (the window's reopenings); ProvenAt is when.
	Proven     bool       `json:"proven"`
	ProvenAt   *time.Time `json:"provenAt,omitempty"`
	Generation int64      `json:"generation"`
}

// Anomaly kinds.
const (
	// AnomalyAboveCurrent: documents above the version the applied
	// migrations give (a release newer than them wrote them).
	AnomalyAboveCurrent = "above-current"
	// AnomalyBelowClosed: documents below the current version although
	// the window was closed (a release older than the applied migrations
	// still writes).
	AnomalyBelowClosed = "below-after-close"
	// AnomalyUnknownVersion: documents at a version no migration file
	// gives the collection, or whose version field is not a version.
	AnomalyUnknownVersion = "unknown-version"
)

// Anomaly is documents of a collection that should not be there.
type Anomaly struct {
	Kind string `json:"kind"`
	// Count is how many (with StatusOptions.Counts; 0 when a query with
	// limit 1 found one).
	Count int64 `json:"count,omitempty"`
	// Versions are the versions found (unknown-version, with counts).
	Versions []string `json:"versions,omitempty"`
	Message  string   `json:"message"`
}

// ExtractWindow is one open extract window: the extract (run operation
// Run, from 1, of migration Migration) of the collection's Array.
type ExtractWindow struct {
	Migration int64  `json:"migration"`
	Run       int    `json:"run"`
	Array     string `json:"array"`
}
