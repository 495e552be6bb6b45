package runner

// The validator window. This file owns it: which validator `up` and `down`
// send for a collection whose documents carry versions, and when the
// window may close. (The backfill's walk sets the checkpoint's proven
// flag; everything else about the window is here.)
//
// Invariants:
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
//     branch and is rejected.
//  2. The window closes (the plain S(cv) is sent) only under the migration
//     lock, and only right after a fresh proof: a query, limit 1, for a
//     document whose version is not cv, found none. The backfill
//     checkpoint's proven flag only says that a proof is worth trying.
//  3. Whatever may make older documents exist again reopens the window:
//     sending a window (up of a migration that changes the document
//     version, down) clears the checkpoint's proven and tightened flags and
//     increments its generation (internal/state), so a later `up` closes it
//     again only after a new backfill and a new proof, and a backfill's
//     proof computed before the reopen is never recorded.
//  4. Only this file writes the window's flags (tightened, generation);
//     the backfill writes progress and a proof conditional on the
//     generation it read.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// docVersionAt is the document version of coll once migration v is
// applied: the last migration up to v that declares an upgrade for it.
func (r *Runner) docVersionAt(coll string, v int64) int64 {
	if r.registry.Current(coll) <= v {
		return r.registry.Current(coll)
	}
	return r.registry.Previous(coll, v+1)
}

// versionSchema is one branch of a window: document version k and the
// schema in force while k was current (nil: none was declared).
type versionSchema struct {
	version   int64
	validator bson.D
	from      int64 // the migration that declared validator
}

// versionSchemas lists, oldest first, every document version of coll as of
// migration at, each with the schema in force while it was current.
func (r *Runner) versionSchemas(coll string, at int64) []versionSchema {
	out := []versionSchema{{version: 0}}
	var cur bson.D
	var from int64
	for _, m := range r.migrations {
		if m.Version > at {
			break
		}
		c := m.Collection(coll)
		if c == nil {
			continue
		}
		if len(c.Upgrade) > 0 {
			// A new version starts; the previous one keeps the schema it had.
			out = append(out, versionSchema{version: m.Version, validator: cur, from: from})
		}
		if c.Validator != nil {
			cur, from = c.Validator, m.Version
			out[len(out)-1].validator, out[len(out)-1].from = cur, from
		}
	}
	return out
}

// windowAt is the validator coll has once migration at is applied, with
// the window open: the plain schema when its documents carry no version
// (no upgrade yet), nil when no validator was ever declared.
func (r *Runner) windowAt(coll string, at int64) bson.D {
	vs := r.versionSchemas(coll, at)
	if len(vs) == 1 {
		return vs[0].validator
	}
	var branches bson.A
	described := false
	for i := len(vs) - 1; i >= 0; i-- {
		cond := r.registry.VersionIs(vs[i].version)
		if vs[i].validator != nil {
			described = true
			cond = bson.D{{Key: "$and", Value: bson.A{cond, vs[i].validator}}}
		}
		branches = append(branches, cond)
	}
	if !described {
		return nil
	}
	return bson.D{{Key: "$or", Value: branches}}
}

// plainAt is the validator of coll's current document version as of
// migration at, without the window (what tightening sends).
func (r *Runner) plainAt(coll string, at int64) bson.D {
	vs := r.versionSchemas(coll, at)
	return vs[len(vs)-1].validator
}

// windowFor returns the validator to send for coll when applying
// migration v, and whether it is the (open) window: the plain schema only
// when a backfill proved, and a fresh query confirms, that no document is
// at another version than the current one (invariant 2).
func (r *Runner) windowFor(ctx context.Context, coll string, v int64) (validator bson.D, open bool, err error) {
	cv := r.docVersionAt(coll, v)
	w := r.windowAt(coll, v)
	if cv == 0 || w == nil {
		return w, false, nil
	}
	proven, err := r.provenNow(ctx, coll, cv)
	if err != nil || proven {
		return r.plainAt(coll, v), false, err
	}
	return w, true, nil
}

// provenNow reports whether the checkpoint of coll claims that no document
// below cv remains and a query (limit 1) confirms it now.
func (r *Runner) provenNow(ctx context.Context, coll string, cv int64) (bool, error) {
	cp, err := r.readCheckpoint(ctx, coll)
	if err != nil || cp == nil || !cp.Proven || cp.Target != cv {
		return false, err
	}
	other, err := r.otherVersionRemains(ctx, coll, cv)
	return !other, err
}

// otherVersionRemains reports whether a query (limit 1) finds a document
// of coll at another version than cv.
func (r *Runner) otherVersionRemains(ctx context.Context, coll string, cv int64) (bool, error) {
	err := r.db.Collection(coll).FindOne(ctx, r.registry.VersionNot(cv),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("check that no %s document is below version %d: %w", coll, cv, err)
	}
	return true, nil
}

// closeWindows records the windows cmds (tightening collMods) closed. The
// proof ran before each collMod, and the window was in force until the
// server applied it: an old release's insert in between was accepted. So
// the proof runs again now that the server refuses such writes; a
// document it finds means the window is sent again and recorded open
// (invariant 2: the window stays closed only after a proof that follows
// the collMod). It returns the commands it sent.
func (r *Runner) closeWindows(ctx context.Context, top int64, cmds []Command) ([]CommandResult, []string, error) {
	var results []CommandResult
	var clientSide []string
	for _, c := range cmds {
		cv := r.docVersionAt(c.Collection, top)
		other, err := r.otherVersionRemains(ctx, c.Collection, cv)
		if err != nil {
			return results, clientSide, err
		}
		if !other {
			if err := r.markTightened(ctx, c.Collection); err != nil {
				return results, clientSide, err
			}
			r.cfg.log.Log(events.WindowClosed{Collection: c.Collection})
			continue
		}
		w := collModCommand(c.Collection, bson.D{{Key: "validator", Value: r.windowAt(c.Collection, top)}})
		res, cs, err := r.runAll(ctx, 0, "validator window", "up", []Command{w})
		results, clientSide = append(results, res...), append(clientSide, cs...)
		if err != nil {
			return results, clientSide, err
		}
		if err := r.reopen(finishing(ctx), c.Collection); err != nil {
			return results, clientSide, err
		}
		r.cfg.log.Log(events.WindowReopened{Collection: c.Collection, Version: cv})
	}
	return results, clientSide, nil
}

func (r *Runner) readCheckpoint(ctx context.Context, coll string) (*state.Checkpoint, error) {
	return r.state.Read(ctx, coll)
}

// tightenCommands closes the windows that can close now: for each
// collection whose applied validator is a window, whose backfill claims
// no document below its current version remains, whose window is not
// closed yet, and for which a fresh query confirms the claim, a collMod
// with the plain schema.
func (r *Runner) tightenCommands(ctx context.Context, applied map[int64]LedgerEntry) ([]Command, error) {
	var cmds []Command
	top := maxApplied(applied)
	for _, name := range bsonx.CollectionsWithValidators(r.migrations) {
		cv := r.docVersionAt(name, top)
		if cv == 0 || r.windowAt(name, top) == nil {
			continue
		}
		cp, err := r.readCheckpoint(ctx, name)
		if err != nil {
			return nil, err
		}
		if cp == nil || cp.Tightened {
			continue
		}
		proven, err := r.provenNow(ctx, name, cv)
		if err != nil {
			return nil, err
		}
		if !proven {
			continue
		}
		cmd := collModCommand(name, bson.D{{Key: "validator", Value: r.plainAt(name, top)}})
		cmd.Tighten = true
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// markTightened records that coll's window was closed.
func (r *Runner) markTightened(ctx context.Context, coll string) error {
	return r.state.MarkTightened(ctx, coll)
}

// reopen clears the proof and the tightened flag of coll and increments
// its generation (invariant 3): a window was sent, so older documents may
// exist again, and a backfill's proof computed before now is not recorded.
func (r *Runner) reopen(ctx context.Context, coll string) error {
	return r.state.Reopen(ctx, coll)
}
