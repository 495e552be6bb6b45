package window

// The extract window: an extract (pkg/reshape) moves a parent's embedded
// array into a child collection without changing the parent's document
// version, so the version window above cannot tell a parent that still
// holds the array from one that was moved. When the extract's migration m
// declares a validator S(m) for the parent, the parent's validator is,
// while the extract window is open, {$or: [V, S_before(m)]}: V what the
// version window gives (the window, or its plain schema once closed) and
// S_before(m) the window in force before m ([Set.At] at m-1), which
// accepted the array. Invariants (added to the package's):
//
//  5. The extract window is opened by the `up` that applies m, in the
//     collMod that sends S(m), before the extract runs: old releases'
//     writes of the array, the extract's epoch stamp and what is appended
//     after its last pass are all accepted. An extract whose migration
//     declares no validator for the parent has no window (S_before stays).
//  6. It closes (the validator without S_before(m) is sent) only under the
//     migration lock, only after the extract's progress is done, a fresh
//     proof ([Extract.Remains], limit 1) found no parent still holding
//     the array, and no live release knows a version of the parent below
//     the one it has at m (pkg/release); the proof runs again after the
//     collMod, and a parent found then sends the window again. Its state
//     is one flag, windowClosed, on the extract's own run-once progress
//     document (internal/state, "$run$<version>$<index>"), written only by
//     the runner: the backfill's version proof does not apply to it.
//  7. Down of m forgets that progress document (state.ForgetRun), so the
//     window is open again for a later up; down restores S_before(m)
//     before re-embedding anyway. Every validator the runner sends for the
//     parent, and the declared state reassert compares with, goes through
//     [Set.WithExtracts] with the open extract windows.

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// Extract is one extract operation whose migration declares a validator
// for its parent: it has an extract window.
type Extract struct {
	Version int64  // the migration
	Index   int    // the operation's index in the migration's run: list
	File    string // the migration's file
	Op      *migration.Extract
}

// Remains is the proof's filter: a parent that still holds the array
// (with keep: {first: k}, more than the k kept elements).
func (x Extract) Remains() bson.D {
	path := x.Op.Array
	if x.Op.Keep == migration.KeepFirst {
		path += "." + strconv.Itoa(x.Op.First)
	}
	return bson.D{{Key: path, Value: bson.D{{Key: "$exists", Value: true}}}}
}

// Extracts lists, oldest first, the extracts from coll of the migrations
// up to at whose migration declares a validator for coll.
func (s *Set) Extracts(coll string, at int64) []Extract {
	var out []Extract
	for _, m := range s.migrations {
		if m.Version > at {
			break
		}
		if c := m.Collection(coll); c == nil || c.Validator == nil {
			continue
		}
		for i, op := range m.Run {
			if op.Kind == migration.RunExtract && op.Extract.From == coll {
				out = append(out, Extract{Version: m.Version, Index: i, File: m.File, Op: op.Extract})
			}
		}
	}
	return out
}

// OpenExtracts are the extract windows of coll as of at that closed does
// not report closed.
func (s *Set) OpenExtracts(coll string, at int64, closed func(Extract) (bool, error)) ([]Extract, error) {
	var out []Extract
	for _, x := range s.Extracts(coll, at) {
		c, err := closed(x)
		if err != nil {
			return nil, err
		}
		if !c {
			out = append(out, x)
		}
	}
	return out, nil
}

// WithExtracts is the validator of coll with the extract windows open
// held open: {$or: [v, S_before(m) for each]}, or v when open is empty.
// A nil v or S_before (no validator) accepts everything, so the result
// is nil (no validator).
func (s *Set) WithExtracts(v bson.D, coll string, open []Extract) bson.D {
	if len(open) == 0 || v == nil {
		return v
	}
	branches := bson.A{v}
	seen := map[int64]bool{}
	for _, x := range open {
		if seen[x.Version] {
			continue
		}
		seen[x.Version] = true
		before := s.At(coll, x.Version-1)
		if before == nil {
			return nil
		}
		branches = append(branches, before)
	}
	return bson.D{{Key: "$or", Value: branches}}
}
