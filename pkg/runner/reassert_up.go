package runner

// up re-asserts the declared state where the server differs: before the
// pending migrations, it compares the server's validators, levels,
// actions and indexes with what the applied migrations declare
// (serverstate.Compare, as after a takeover) and sends what puts the
// declared state back; Plan shows the same commands first. Only what the
// applied migrations declare is put back: a level or action none
// declares is the collection's own, and an index no migration names (one
// created by hand) is left alone (status reports it as drift of the
// server).

import (
	"context"

	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/events"
)

// Reassertion is what up puts back before the pending migrations: how the
// server differs from the applied migrations, and the commands.
type Reassertion struct {
	Differences []ServerDifference `json:"differences"`
	Commands    []Command          `json:"commands"`
}

// Reasserted is what up sent to put the declared state back.
type Reasserted struct {
	Differences []ServerDifference `json:"differences"`
	Commands    []CommandResult    `json:"commands"`
}

// planReassert is what up would put back (nil: nothing differs, or the
// declared state cannot be known).
func (r *Runner) planReassert(ctx context.Context) (*Reassertion, error) {
	f, err := r.declaredFixes(ctx)
	if err != nil || f.Unchecked != "" || len(f.Cmds) == 0 {
		return nil, err
	}
	return &Reassertion{Differences: driftsOf(f.Diffs), Commands: f.Cmds}, nil
}

// reassertDiffering puts the declared state back where the server
// differs, under the migration lock ctx carries (nil: nothing differed).
func (r *Runner) reassertDiffering(ctx context.Context) (*Reasserted, error) {
	f, err := r.declaredFixes(ctx)
	if err != nil || f.Unchecked != "" || len(f.Cmds) == 0 {
		return nil, err
	}
	r.cfg.log.Log(events.StateChecking{Why: "the server differs from what the applied migrations declare"})
	done, err := r.sendFixes(ctx, f)
	return &Reasserted{Differences: driftsOf(f.Diffs), Commands: done}, err
}

func driftsOf(diffs []serverstate.Difference) []ServerDifference {
	out := make([]ServerDifference, len(diffs))
	for i, d := range diffs {
		out[i] = serverstate.DriftOf(d)
	}
	return out
}
