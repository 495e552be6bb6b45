package runner

// The validator window: internal/window computes it and states its
// invariants, internal/windowplan decides which validator `up` and `down`
// send for a collection whose documents carry versions; this file sends
// it, closes and reopens it under the migration lock. (The backfill's
// walk sets the checkpoint's proven flag; internal/state stores the
// window's flags.)

import (
	"context"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/internal/windowplan"
	"github.com/mongomig/mongomig/pkg/events"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// windows decides the runner's validator windows.
func (r *Runner) windows() *windowplan.Source {
	return &windowplan.Source{DB: r.db, Migrations: r.migrations, Registry: r.registry, Window: r.window, State: r.state, AllowOldReleases: r.cfg.allowOldReleases}
}

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
// migration v, and whether it is the (open) window (windowplan's For).
func (r *Runner) windowFor(ctx context.Context, coll string, v int64) (validator bson.D, open bool, err error) {
	return r.windows().For(ctx, coll, v)
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
		other, err := r.windows().OtherVersionRemains(ctx, c.Collection, cv)
		if err != nil {
			return results, clientSide, err
		}
		if !other {
			if err := r.state.MarkTightened(ctx, c.Collection); err != nil {
				return results, clientSide, err
			}
			r.cfg.log.Log(events.WindowClosed{Collection: c.Collection})
			continue
		}
		w, err := r.windows().Reopened(ctx, c.Collection, top)
		if err != nil {
			return results, clientSide, err
		}
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

// tightenCommands are the collMods that close the windows that can close
// now, once the migrations applied are (windowplan's Tighten).
func (r *Runner) tightenCommands(ctx context.Context, applied map[int64]LedgerEntry) ([]Command, error) {
	return r.windows().Tighten(ctx, maxApplied(applied))
}

// reopen clears the proof and the tightened flag of coll and increments
// its generation (window invariant 3): a window was sent, so older
// documents may exist again, and a backfill's proof computed before now is
// not recorded.
func (r *Runner) reopen(ctx context.Context, coll string) error {
	return r.state.Reopen(ctx, coll)
}
