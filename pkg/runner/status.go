package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/version"
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
	// Releases are the live release announcements (status_releases.go).
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

// StatusOf is [Runner.Status] with options.
func (r *Runner) StatusOf(ctx context.Context, opts StatusOptions) (*Status, error) {
	st, err := r.status(ctx, false)
	if err != nil {
		return nil, err
	}
	if st.Collections, err = r.collectionStatus(ctx, st.applied, opts.Counts); err != nil {
		return nil, err
	}
	if opts.Check && !opts.Counts {
		if err := r.findAboveCurrent(ctx, st.Collections); err != nil {
			return nil, err
		}
	}
	if err := r.deployStatus(ctx, st, opts); err != nil {
		return nil, err
	}
	if err := r.releasesOf(ctx, st); err != nil {
		return nil, err
	}
	if err := r.lifecycleStatus(ctx, st); err != nil {
		return nil, err
	}
	if st.Leases, err = r.Leases(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

func (r *Runner) status(ctx context.Context, withCollections bool) (*Status, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{applied: ledger, Migrations: []MigrationStatus{}, Collections: []CollectionStatus{}}
	st.Migrations, st.Current, st.Latest = statusview.Migrations(r.migrations, ledger)
	st.Pending, st.Drifted = statusview.Counts(st.Migrations)
	if withCollections {
		if st.Collections, err = r.collectionStatus(ctx, ledger, true); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (r *Runner) collectionStatus(ctx context.Context, ledger map[int64]LedgerEntry, counts bool) ([]CollectionStatus, error) {
	names := map[string]bool{}
	for _, m := range r.migrations {
		for _, c := range m.Collections {
			names[c.Name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	held, err := r.heldAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]CollectionStatus, 0, len(sorted))
	for _, name := range sorted {
		cs := statusview.Declared(name, r.migrations, ledger, r.registry.Current(name))
		ex, err := r.extractStatus(ctx, &cs, maxApplied(ledger)) // window_extract.go
		if err != nil {
			return nil, err
		}
		if cs.Enforcement == EnforcementServer {
			top := maxApplied(ledger)
			serverEnforcement(&cs, held[name], append(ex, r.windowAt(name, top), r.plainAt(name, top))...)
		}
		if counts {
			docs, err := r.countVersions(ctx, name)
			if err != nil {
				return nil, err
			}
			cs.Documents = docs
			for _, d := range docs {
				if d.Invalid == "" && d.Version > cs.CurrentVersion {
					cs.AboveCurrent += d.Count
				}
			}
		}
		top := maxApplied(ledger)
		if cv := r.docVersionAt(name, top); cv > 0 && r.windowAt(name, top) != nil {
			cs.Window = "open"
			cp, err := r.readCheckpoint(ctx, name)
			if err != nil {
				return nil, err
			}
			if cp != nil && cp.Tightened && cp.Target == cv {
				cs.Window = "closed"
			} else {
				for _, b := range slices.Backward(r.versionSchemas(name, top)) {
					cs.WindowBranches = append(cs.WindowBranches, WindowBranch{Version: b.Version, SchemaFrom: b.From, Unchecked: b.Validator == nil})
				}
			}
		}
		out = append(out, cs)
	}
	return out, nil
}

// countVersions groups a collection's documents by version field.
func (r *Runner) countVersions(ctx context.Context, coll string) ([]VersionCount, error) {
	f := "$" + r.cfg.versionField
	pipeline := mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "v", Value: f}, {Key: "t", Value: bson.D{{Key: "$type", Value: f}}}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}
	cur, err := r.db.Collection(coll).Aggregate(ctx, pipeline)
	if err != nil {
		return nil, fmt.Errorf("count document versions of %s: %w", coll, err)
	}
	var rows []struct {
		ID struct {
			V bson.RawValue `bson:"v"`
		} `bson:"_id"`
		N int64 `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("count document versions of %s: %w", coll, err)
	}
	byVersion := map[int64]int64{}
	var out []VersionCount
	for _, row := range rows {
		// $group puts a missing field under null; the rule is pkg/version's.
		if v, ok := version.ParseVersion(row.ID.V); ok {
			byVersion[v] += row.N
			continue
		}
		out = append(out, VersionCount{Invalid: bsonx.ExtJSONOf(row.ID.V), Count: row.N})
	}
	for v, n := range byVersion {
		out = append(out, VersionCount{Version: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Invalid == "") != (out[j].Invalid == "") {
			return out[i].Invalid == ""
		}
		return out[i].Version < out[j].Version || out[i].Version == out[j].Version && out[i].Invalid < out[j].Invalid
	})
	if out == nil {
		out = []VersionCount{}
	}
	return out, nil
}

// LedgerStatus is [Runner.Status] without the collections and leases: the
// ledger against the files, read from the ledger alone (no collection is
// scanned), which is all `up` and `down` need to report where they left
// the database.
func (r *Runner) LedgerStatus(ctx context.Context) (*Status, error) { return r.status(ctx, false) }

// findAboveCurrent sets AboveCurrent to 1 for each collection of colls
// holding a document above its current version.
func (r *Runner) findAboveCurrent(ctx context.Context, colls []CollectionStatus) error {
	for i, c := range colls {
		if r.registry.Current(c.Name) == 0 {
			continue // its documents carry no version
		}
		err := r.db.Collection(c.Name).FindOne(ctx, r.registry.VersionAtLeast(c.CurrentVersion+1),
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		switch {
		case err == nil:
			colls[i].AboveCurrent = 1
		case !errors.Is(err, mongo.ErrNoDocuments):
			return fmt.Errorf("look for %s documents above version %d: %w", c.Name, c.CurrentVersion, err)
		}
	}
	return nil
}

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
