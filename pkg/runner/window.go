package runner

// The validator window: internal/window computes it and states its
// invariants; this file decides which validator `up` and `down` send for
// a collection whose documents carry versions, proves, closes and reopens
// it under the migration lock. (The backfill's walk sets the checkpoint's
// proven flag; internal/state stores the window's flags.)

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
	"github.com/mongomig/mongomig/internal/window"
)

// docVersionAt is the document version of coll once migration v is
// applied.
func (r *Runner) docVersionAt(coll string, v int64) int64 { return r.window.DocVersionAt(coll, v) }

// versionSchemas lists, oldest first, every document version of coll as of
// migration at, each with the schema in force while it was current.
func (r *Runner) versionSchemas(coll string, at int64) []window.Branch {
	return r.window.Branches(coll, at)
}

// windowAt is the validator coll has once migration at is applied, with
// the window open (see [window.Set.At]).
func (r *Runner) windowAt(coll string, at int64) bson.D { return r.window.At(coll, at) }

// plainAt is the validator of coll's current document version as of
// migration at, without the window (what tightening sends).
func (r *Runner) plainAt(coll string, at int64) bson.D { return r.window.Plain(coll, at) }

// windowFor returns the validator to send for coll when applying
// migration v, and whether it is the (open) window: the plain schema only
// when a backfill proved, and a fresh query confirms, that no document is
// at another version than the current one (internal/window, invariant 2).
func (r *Runner) windowFor(ctx context.Context, coll string, v int64) (validator bson.D, open bool, err error) {
	cv := r.docVersionAt(coll, v)
	w := r.windowAt(coll, v)
	if cv == 0 || w == nil {
		w, err := r.withExtracts(ctx, coll, v, w) // window_extract.go
		return w, false, err
	}
	proven, err := r.provenNow(ctx, coll, cv)
	if err != nil {
		return nil, false, err
	}
	if proven {
		w, err := r.withExtracts(ctx, coll, v, r.plainAt(coll, v))
		return w, false, err
	}
	w, err = r.withExtracts(ctx, coll, v, w)
	return w, true, err
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
// (window invariant 2: the window stays closed only after a proof that
// follows the collMod). It returns the commands it sent.
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
		open, err := r.withExtracts(ctx, c.Collection, top, r.windowAt(c.Collection, top))
		if err != nil {
			return results, clientSide, err
		}
		w := collModCommand(c.Collection, bson.D{{Key: "validator", Value: open}})
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
		plain, err := r.withExtracts(ctx, name, top, r.plainAt(name, top))
		if err != nil {
			return nil, err
		}
		cmd := collModCommand(name, bson.D{{Key: "validator", Value: plain}})
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
// its generation (window invariant 3): a window was sent, so older
// documents may exist again, and a backfill's proof computed before now is
// not recorded.
func (r *Runner) reopen(ctx context.Context, coll string) error {
	return r.state.Reopen(ctx, coll)
}
