// Package window owns the validator window: which validator the server
// holds for a collection whose documents carry versions, computed from
// the migrations alone. The runner is the only sender (collMod, create);
// it proves, closes and reopens the window under the migration lock, and
// internal/state stores the window's flags (tightened, generation) in the
// backfill checkpoint. Invariants:
//
//  1. Each branch checks its own version. While the window is open the
//     validator on the server is {$or: [branch(k) for each document
//     version k]}, and branch(k) accepts a document whose version field is
//     k (version.Registry.VersionIs: missing, null or 0 for k = 0; never an
//     array holding k) only if it satisfies S(k), the schema
//     in force while k was current: the last validator declared for the
//     collection by a migration numbered below the next document version
//     (for the current version: up to the migration applied). A version no
//     migration describes (no validator declared yet) passes unchecked; a
//     version that is no document version of the collection matches no
//     branch and is rejected ([Set.At]).
//  2. The window closes (the plain S(cv), [Set.Plain], is sent) only
//     under the migration lock, and only right after a fresh proof: a
//     query, limit 1, for a document whose version is not cv, found none.
//     The backfill checkpoint's proven flag only says that a proof is
//     worth trying.
//  3. Whatever may make older documents exist again reopens the window:
//     sending a window (up of a migration that changes the document
//     version, down) clears the checkpoint's proven and tightened flags and
//     increments its generation (internal/state), so a later `up` closes it
//     again only after a new backfill and a new proof, and a backfill's
//     proof computed before the reopen is never recorded.
//  4. Only the runner (its window.go) writes the window's flags
//     (tightened, generation); the backfill writes progress and a proof
//     conditional on the generation it read.
//
// An extract (pkg/reshape) changes no document version, so its parent
// has a second window, keyed by the run operation rather than the
// version: invariants 5 to 7 in extract.go.
package window

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Set computes the windows of one migration directory.
type Set struct {
	migrations []*migration.Migration
	registry   *version.Registry
}

// New returns the windows of ms (in version order), whose registry is reg.
func New(ms []*migration.Migration, reg *version.Registry) *Set {
	return &Set{migrations: ms, registry: reg}
}

// DocVersionAt is the document version of coll once migration v is
// applied: the last migration up to v that declares an upgrade for it.
func (s *Set) DocVersionAt(coll string, v int64) int64 {
	if s.registry.Current(coll) <= v {
		return s.registry.Current(coll)
	}
	return s.registry.Previous(coll, v+1)
}

// Branch is one branch of a window: document version Version and the
// schema in force while it was current (nil: none was declared).
type Branch struct {
	Version   int64
	Validator bson.D
	From      int64 // the migration that declared Validator
}

// Branches lists, oldest first, every document version of coll as of
// migration at, each with the schema in force while it was current.
func (s *Set) Branches(coll string, at int64) []Branch {
	out := []Branch{{Version: 0}}
	var cur bson.D
	var from int64
	for _, m := range s.migrations {
		if m.Version > at {
			break
		}
		c := m.Collection(coll)
		if c == nil {
			continue
		}
		if len(c.Upgrade) > 0 {
			// A new version starts; the previous one keeps the schema it had.
			out = append(out, Branch{Version: m.Version, Validator: cur, From: from})
		}
		if c.Validator != nil {
			cur, from = c.Validator, m.Version
			out[len(out)-1].Validator, out[len(out)-1].From = cur, from
		}
	}
	return out
}

// At is the validator coll has once migration at is applied, with the
// window open: the plain schema when its documents carry no version (no
// upgrade yet), nil when no validator was ever declared.
func (s *Set) At(coll string, at int64) bson.D {
	vs := s.Branches(coll, at)
	if len(vs) == 1 {
		return vs[0].Validator
	}
	var branches bson.A
	described := false
	for i := len(vs) - 1; i >= 0; i-- {
		cond := s.registry.VersionIs(vs[i].Version)
		if vs[i].Validator != nil {
			described = true
			cond = bson.D{{Key: "$and", Value: bson.A{cond, vs[i].Validator}}}
		}
		branches = append(branches, cond)
	}
	if !described {
		return nil
	}
	return bson.D{{Key: "$or", Value: branches}}
}

// Plain is the validator of coll's current document version as of
// migration at, without the window (what closing it sends).
func (s *Set) Plain(coll string, at int64) bson.D {
	vs := s.Branches(coll, at)
	return vs[len(vs)-1].Validator
}
