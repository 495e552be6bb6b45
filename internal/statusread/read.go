// Package statusread reads what `status` shows of each migrated
// collection: the validator in force against what the server holds, the
// documents per version, the validator window's state, the backfill as
// its checkpoint records it, what the next `up` does, the anomalies, the
// releases that hold a window open, and the marks. It reads only (no
// write of any kind: TestRunnerHelpersSendNothing); the rows and the pure
// rules that fill them are internal/statusview's, the checkpoint is
// internal/state's, the ledger internal/ledger's. The runner calls it for
// [Runner.Status] and adds what it plans itself (drift, lifecycle).
package statusread

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Reader reads status's rows from one database. Build it with every field
// set; it is safe for concurrent use (it holds no state of its own).
type Reader struct {
	DB         *mongo.Database
	Migrations []*migration.Migration
	Registry   *version.Registry
	Window     *window.Set
	State      *state.Store
	Ledger     *ledger.Store
	// VersionField is the documents' version field.
	VersionField string
	// Extracts returns the validators coll's open extract windows may have
	// left on it as of migration top, and sets its extract rows (the
	// runner's: it opens and closes them).
	Extracts func(ctx context.Context, cs *statusview.CollectionStatus, top int64) ([]bson.D, error)
}

// Collections are the rows of every collection a migration declares, in
// name order, against the applied migrations (entries); counts also
// counts each one's documents per version (a scan of each).
func (r *Reader) Collections(ctx context.Context, entries map[int64]ledger.Entry, counts bool) ([]statusview.CollectionStatus, error) {
	names := map[string]bool{}
	for _, m := range r.Migrations {
		for _, c := range m.Collections {
			names[c.Name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	held, err := serverstate.Options(ctx, r.DB, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read back validators (listCollections): %w", err)
	}
	top := ledger.MaxApplied(entries)
	out := make([]statusview.CollectionStatus, 0, len(sorted))
	for _, name := range sorted {
		cs := statusview.Declared(name, r.Migrations, entries, r.Registry.Current(name))
		ex, err := r.Extracts(ctx, &cs, top)
		if err != nil {
			return nil, err
		}
		if cs.Enforcement == serverstate.EnforcementServer {
			expected := append(ex, r.Window.At(name, top), r.Window.Plain(name, top))
			e := serverstate.CheckEnforced(cs.Name, held[name], cs.Level, cs.Action, expected...)
			cs.Enforcement, cs.EnforcementNote, cs.Level, cs.Action = e.Enforcement, e.Note, e.Level, e.Action
		}
		if counts {
			if err := r.count(ctx, &cs); err != nil {
				return nil, err
			}
		}
		if err := r.windowOf(ctx, &cs, top); err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// count sets cs's documents per version and how many are above its
// current version.
func (r *Reader) count(ctx context.Context, cs *statusview.CollectionStatus) error {
	docs, err := r.countVersions(ctx, cs.Name)
	if err != nil {
		return err
	}
	cs.Documents = docs
	for _, d := range docs {
		if d.Invalid == "" && d.Version > cs.CurrentVersion {
			cs.AboveCurrent += d.Count
		}
	}
	return nil
}

// windowOf sets cs's window state ("open" with its branches, or
// "closed") once migration top is applied; nothing for a collection
// without one.
func (r *Reader) windowOf(ctx context.Context, cs *statusview.CollectionStatus, top int64) error {
	cv := r.Window.DocVersionAt(cs.Name, top)
	if cv == 0 || r.Window.At(cs.Name, top) == nil {
		return nil
	}
	cs.Window = "open"
	cp, err := r.State.Read(ctx, cs.Name)
	if err != nil {
		return err
	}
	if cp != nil && cp.Tightened && cp.Target == cv {
		cs.Window = "closed"
		return nil
	}
	for _, b := range slices.Backward(r.Window.Branches(cs.Name, top)) {
		cs.WindowBranches = append(cs.WindowBranches, statusview.WindowBranch{Version: b.Version, SchemaFrom: b.From, Unchecked: b.Validator == nil})
	}
	return nil
}

// countVersions groups a collection's documents by version field.
func (r *Reader) countVersions(ctx context.Context, coll string) ([]bsonx.VersionCount, error) {
	f := "$" + r.VersionField
	pipeline := mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "v", Value: f}, {Key: "t", Value: bson.D{{Key: "$type", Value: f}}}}}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}
	cur, err := r.DB.Collection(coll).Aggregate(ctx, pipeline)
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
	var out []bsonx.VersionCount
	for _, row := range rows {
		// $group puts a missing field under null; the rule is pkg/version's.
		if v, ok := version.ParseVersion(row.ID.V); ok {
			byVersion[v] += row.N
			continue
		}
		out = append(out, bsonx.VersionCount{Invalid: bsonx.ExtJSONOf(row.ID.V), Count: row.N})
	}
	for v, n := range byVersion {
		out = append(out, bsonx.VersionCount{Version: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Invalid == "") != (out[j].Invalid == "") {
			return out[i].Invalid == ""
		}
		return out[i].Version < out[j].Version || out[i].Version == out[j].Version && out[i].Invalid < out[j].Invalid
	})
	if out == nil {
		out = []bsonx.VersionCount{}
	}
	return out, nil
}
