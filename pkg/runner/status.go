package runner

import (
	"context"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/statusread"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/pkg/release"
)

// Status is the state of the database against the migration files.
type Status struct {
	// Current is the highest applied version (0: none).
	Current     int64              `json:"current"`
	Latest      int64              `json:"latest"`
	Migrations  []MigrationStatus  `json:"migrations"`
	Collections []CollectionStatus `json:"collections"`
	Pending     int                `json:"pending"`
	// Leases are the held leases (the migration lock, backfill leases).
	Leases  []Lease `json:"leases"`
	Drifted int     `json:"drifted"`
	// ServerUnchecked says why the server was not checked against the
	// files (an applied file missing or edited).
	ServerUnchecked string `json:"serverUnchecked,omitempty"`
	// Marks are the migrations recorded applied or not by hand.
	Marks []Mark `json:"marks,omitempty"`
	// Releases are the live release announcements (pkg/release).
	Releases []release.Release `json:"releases"`
	// Buckets are the time-bucketed families the applied migrations
	// declare, with their members (status_lifecycle.go).
	Buckets []FamilyMembers `json:"buckets,omitempty"`
	// Lifecycle is the lifecycle state of the collections and views the
	// applied migrations declare one for (internal/lifecycleplan/status.go).
	Lifecycle []CollectionLifecycle `json:"lifecycle,omitempty"`
	// Undeclared are the collections no migration declares.
	Undeclared []UndeclaredCollection `json:"undeclared"`

	applied map[int64]LedgerEntry
}

// Clean reports whether nothing is pending or drifted, no collection
// holds documents above its current version or another anomaly, and the
// server holds what the files declare (status --check).
func (s *Status) Clean() bool {
	for _, c := range s.Collections {
		if c.AboveCurrent > 0 || len(c.Anomalies) > 0 || len(c.ServerDrift) > 0 {
			return false
		}
	}
	return s.Pending == 0 && s.Drifted == 0
}

// Status reports applied, pending and drifted migrations and, per
// collection, the validator in force and the document versions present.
func (r *Runner) Status(ctx context.Context) (*Status, error) {
	return r.StatusOf(ctx, StatusOptions{Counts: true})
}

// StatusOptions choose what [Runner.StatusOf] reads.
type StatusOptions struct {
	// Counts counts each collection's documents per version, which scans
	// every migrated collection; without it status reads the ledger, the
	// backfill checkpoints and the leases only (Documents is then nil).
	Counts bool
	// Check looks, without counting, for a document above each
	// collection's current version (one query with limit 1 each; see
	// CollectionStatus.AboveCurrent).
	Check bool
}

// StatusOf is [Runner.Status] with options. internal/statusread reads
// the collections' rows; the drift, the lifecycle and the extract windows
// are planned here, as up plans them.
func (r *Runner) StatusOf(ctx context.Context, opts StatusOptions) (*Status, error) {
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	sr := r.statusReader()
	if st.Collections, err = sr.Collections(ctx, st.applied, opts.Counts); err != nil {
		return nil, err
	}
	if opts.Check && !opts.Counts {
		if err := sr.FindAboveCurrent(ctx, st.Collections); err != nil {
			return nil, err
		}
	}
	if err := sr.Deploy(ctx, st.Collections, st.Migrations, st.applied, opts.Check); err != nil {
		return nil, err
	}
	if err := r.serverDrift(ctx, st); err != nil {
		return nil, err
	}
	if st.Marks, err = sr.Marks(ctx, st.Migrations, st.applied); err != nil {
		return nil, err
	}
	if st.Releases, err = r.LiveReleases(ctx); err != nil {
		return nil, err
	}
	if !r.cfg.allowOldReleases {
		sr.HeldByReleases(st.Collections, st.Releases, maxApplied(st.applied))
	}
	if err := r.lifecycleStatus(ctx, st); err != nil {
		return nil, err
	}
	if st.Leases, err = r.Leases(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

func (r *Runner) statusReader() *statusread.Reader {
	return &statusread.Reader{DB: r.db, Migrations: r.migrations, Registry: r.registry, Window: r.window,
		State: r.state, Ledger: r.ledger, VersionField: r.cfg.versionField, Extracts: r.extractStatus}
}

// status is the ledger against the files.
func (r *Runner) status(ctx context.Context) (*Status, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{applied: ledger, Migrations: []MigrationStatus{}, Collections: []CollectionStatus{}}
	st.Migrations, st.Current, st.Latest = statusview.Migrations(r.migrations, ledger)
	st.Pending, st.Drifted = statusview.Counts(st.Migrations)
	return st, nil
}

// LedgerStatus is [Runner.Status] without the collections and leases: the
// ledger against the files, read from the ledger alone (no collection is
// scanned), which is all `up` and `down` need to report where they left
// the database.
func (r *Runner) LedgerStatus(ctx context.Context) (*Status, error) { return r.status(ctx) }

// Status's rows are internal/statusview's.
type (
	// MigrationStatus is one migration's state.
	MigrationStatus = statusview.MigrationStatus
	// CollectionStatus is one collection's schema state.
	CollectionStatus = statusview.CollectionStatus
	// WindowBranch is one branch of an open validator window.
	WindowBranch = statusview.WindowBranch
	// BackfillStatus is a collection's backfill as its checkpoint records it.
	BackfillStatus = statusview.BackfillStatus
	// Anomaly is documents of a collection that should not be there.
	Anomaly = statusview.Anomaly
	// VersionCount is how many documents sit at one document version.
	VersionCount = bsonx.VersionCount
)

// Migration states in a [Status].
const (
	StateApplied = statusview.StateApplied
	StatePending = statusview.StatePending
	StateDrifted = statusview.StateDrifted // applied, but the file changed since
	StateMissing = statusview.StateMissing // applied, but the file is gone
)

// Anomaly kinds (see [Anomaly]).
const (
	AnomalyAboveCurrent   = statusview.AnomalyAboveCurrent
	AnomalyBelowClosed    = statusview.AnomalyBelowClosed
	AnomalyUnknownVersion = statusview.AnomalyUnknownVersion
)
