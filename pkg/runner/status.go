package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
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
	Version        int64      `json:"version"`
	Name           string     `json:"name"`
	File           string     `json:"file"`
	State          string     `json:"state"`
	Checksum       string     `json:"checksum,omitempty"`
	LedgerChecksum string     `json:"ledgerChecksum,omitempty"`
	AppliedAt      *time.Time `json:"appliedAt,omitempty"`
	AppliedBy      string     `json:"appliedBy,omitempty"`
	Marked         *Mark      `json:"marked,omitempty"` // recorded applied by a mark (see Runner.Mark)
}

// VersionCount is how many documents sit at one document version.
type VersionCount = bsonx.VersionCount

// CollectionStatus is one collection's schema state.
type CollectionStatus struct {
	Name string `json:"name"`
	// ValidatorFrom is the applied migration whose validator is in force
	// (0: none declared yet).
	ValidatorFrom int64 `json:"validatorFrom"`
	// Enforcement is "server", "client-side only" or "none" (the
	// Enforcement constants): "server" only when listCollections shows
	// the validator the applied migrations declare, else "absent from the
	// server" or "differs on the server", with EnforcementNote saying
	// what the server holds.
	Enforcement     string `json:"enforcement"`
	EnforcementNote string `json:"enforcementNote,omitempty"`
	Level           string `json:"validationLevel,omitempty"`
	Action          string `json:"validationAction,omitempty"`
	// CurrentVersion is the document version the applied migrations
	// upgrade to; TargetVersion the one all files upgrade to.
	CurrentVersion int64          `json:"currentVersion"`
	TargetVersion  int64          `json:"targetVersion"`
	Documents      []VersionCount `json:"documents"`
	// Window is "open" while the validator also accepts documents below
	// CurrentVersion, "closed" once a backfill proved none remain and up
	// tightened it, "" when the collection has no versioned validator.
	Window string `json:"window,omitempty"`
	// WindowBranches says, while the window is open, what each document
	// version is checked against.
	WindowBranches []WindowBranch `json:"windowBranches,omitempty"`
	// AboveCurrent counts the documents above CurrentVersion (with
	// StatusOptions.Counts; with Check alone, 1 when there is any): a
	// release newer than the applied migrations wrote them, or a backfill
	// ran past a down. A release running the applied files cannot read
	// them (version.TooNewError).
	AboveCurrent int64 `json:"aboveCurrent,omitempty"`
	// LevelFrom and ActionFrom are the applied migrations that declared
	// the level and action (0: none does, the collection keeps the
	// server's setting; see settings.go).
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
	ServerDrift []ServerDifference `json:"serverDrift,omitempty"`
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
	// Buckets are the time-bucketed families the applied migrations
	// declare, with their members (status_lifecycle.go).
	Buckets []FamilyMembers `json:"buckets,omitempty"`
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
	files := map[int64]bool{}
	for _, m := range r.migrations {
		files[m.Version] = true
		ms := MigrationStatus{Version: m.Version, Name: m.Name, File: m.File, State: StatePending, Checksum: m.Checksum}
		if e, ok := ledger[m.Version]; ok {
			at := e.AppliedAt
			ms.AppliedAt, ms.AppliedBy, ms.LedgerChecksum = &at, e.AppliedBy.Host, e.Checksum
			ms.State = StateApplied
			if !sameSchema(e, m) {
				ms.State = StateDrifted
			}
		}
		st.Migrations = append(st.Migrations, ms)
		st.Latest = max(st.Latest, m.Version)
	}
	for v, e := range ledger {
		if !files[v] {
			at := e.AppliedAt
			st.Migrations = append(st.Migrations, MigrationStatus{Version: v, Name: e.Name, File: e.File, State: StateMissing, LedgerChecksum: e.Checksum, AppliedAt: &at, AppliedBy: e.AppliedBy.Host})
		}
		st.Current = max(st.Current, v)
	}
	sort.Slice(st.Migrations, func(i, j int) bool { return st.Migrations[i].Version < st.Migrations[j].Version })
	for _, m := range st.Migrations {
		switch m.State {
		case StatePending:
			st.Pending++
		case StateDrifted, StateMissing:
			st.Drifted++
		}
	}
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
		cs := CollectionStatus{Name: name, Enforcement: "none", TargetVersion: r.registry.Current(name)}
		for _, m := range r.migrations {
			e, applied := ledger[m.Version]
			c := m.Collection(name)
			if !applied || c == nil {
				continue
			}
			if c.Validator != nil {
				cs.ValidatorFrom = m.Version
				cs.Enforcement = "server"
				for _, cso := range e.ClientSideValidators {
					if cso == name {
						cs.Enforcement = "client-side only"
					}
				}
			}
			if c.ValidationLevel != "" {
				cs.Level = string(c.ValidationLevel)
			}
			if c.ValidationAction != "" {
				cs.Action = string(c.ValidationAction)
			}
			if len(c.Upgrade) > 0 {
				cs.CurrentVersion = m.Version
			}
		}
		if cs.ValidatorFrom != 0 {
			// What the server holds: a migration that leaves them out
			// keeps the previous ones, and a new validator gets MongoDB's
			// defaults (as reports say).
			cs.Level = string(bsonx.OrDefault(migration.Level(cs.Level), migration.LevelStrict))
			cs.Action = string(bsonx.OrDefault(migration.Action(cs.Action), migration.ActionError))
		}
		if cs.Enforcement == EnforcementServer {
			top := maxApplied(ledger)
			serverEnforcement(&cs, held[name], r.windowAt(name, top), r.plainAt(name, top))
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
					cs.WindowBranches = append(cs.WindowBranches, WindowBranch{Version: b.version, SchemaFrom: b.from, Unchecked: b.validator == nil})
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
