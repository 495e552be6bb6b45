package runner

// The validator window: internal/window computes it and states its
// invariants, internal/windowplan decides which validator `up` and `down`
// send for a collection whose documents carry versions; this file sends
// it, closes and reopens it under the migration lock. (The backfill's
// walk sets the checkpoint's proven flag; internal/state stores the
// window's flags.)

import (
	"context"

	"github.com/mongomig/mongomig/internal/windowplan"
	"github.com/mongomig/mongomig/pkg/events"
)

// windows decides the runner's validator windows.
func (r *Runner) windows() *windowplan.Source {
	return &windowplan.Source{DB: r.db, Migrations: r.migrations, Registry: r.registry, Window: r.window, State: r.state, AllowOldReleases: r.cfg.allowOldReleases}
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
		cv := r.window.DocVersionAt(c.Collection, top)
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
		if err := r.state.Reopen(finishing(ctx), c.Collection); err != nil {
			return results, clientSide, err
		}
		r.cfg.log.Log(events.WindowReopened{Collection: c.Collection, Version: cv})
	}
	return results, clientSide, nil
}
