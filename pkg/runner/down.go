package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
)

// ErrNothingToRevert is returned by Down and DownTo when no applied
// migration lies above the target.
var ErrNothingToRevert = errors.New("nothing to revert")

// ErrPartway is a revert refused because documents are partway through an
// interrupted server-side backfill.
var ErrPartway = downgradewalk.ErrPartway

// Down reverts the last applied migration.
func (r *Runner) Down(ctx context.Context) ([]Applied, error) {
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	if st.Current == 0 {
		return nil, fmt.Errorf("%w: no migration is applied", ErrNothingToRevert)
	}
	return r.DownTo(ctx, ledger.Below(st.applied, st.Current))
}

// DownTo reverts applied migrations above version to, newest first. The
// whole revert is checked before the first command (every applied file
// present and unchanged, every index it must recreate known, every stored
// document at a reverted version downgradable); then, per migration: the
// documents first (guarded deltas, so a concurrent write is never erased),
// under the open validator window, then the indexes and validators, then
// the ledger entry. Cancelling ctx stops it between two commands or two
// batches of document writes (the batch in flight completes, so the count
// is exact) with an [*InterruptedError], whose Downgraded lists the
// documents already downgraded by the migration it stopped inside.
func (r *Runner) DownTo(ctx context.Context, to int64) (reverted []Applied, err error) {
	if to < 0 {
		return nil, fmt.Errorf("invalid target version %d", to)
	}
	total := 0
	err = r.withLock(withCommand(ctx, "down"), lockID, func(ctx context.Context) error {
		return r.holdBackfills(ctx, to, func(ctx context.Context) error {
			return r.downTo(ctx, to, &reverted, &total)
		})
	})
	err = r.afterLateSend(ctx, "down", err)
	return reverted, interrupted(ctx, err, "down", reverted, total)
}

// downTo reverts the migrations above to under the migration lock and the
// reverted collections' backfill leases, appending each to reverted.
func (r *Runner) downTo(ctx context.Context, to int64, reverted *[]Applied, total *int) error {
	if err := r.reassertAfterTakeover(ctx); err != nil {
		return err
	}
	dp, err := r.checkDown(ctx, to)
	if err != nil {
		return err
	}
	if err := r.acceptDrift(ctx); err != nil {
		return err
	}
	*total = len(dp.targets)
	if err := r.noteGuardScans(ctx, dp); err != nil {
		return err
	}
	for _, t := range dp.targets {
		a, err := r.revert(ctx, t, dp.exists)
		if err != nil {
			return err
		}
		*reverted = append(*reverted, a)
	}
	return nil
}

// downPlan is a revert that passed every check (lifecycleplan's Revert):
// the migrations to revert, newest first, and the collections that exist.
type downPlan struct {
	targets []lifecycleplan.Target
	exists  map[string]bool
}

// checkDown checks the whole revert to version to without writing
// anything (lifecycleplan's Revert), and returns what to do. PlanDown runs
// the same checks, so a dry run refuses exactly what down would.
func (r *Runner) checkDown(ctx context.Context, to int64) (*downPlan, error) {
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	if err := statusview.Drift(st.Migrations, r.cfg.allowDrift, true); err != nil {
		return nil, err
	}
	exists, err := r.existing(ctx)
	if err != nil {
		return nil, err
	}
	restore, err := r.windows().DownWindow(ctx, st.Current)
	if err != nil {
		return nil, err
	}
	applied := func(v int64) bool { _, ok := st.applied[v]; return ok }
	targets, err := r.planner().Revert(ctx, lifecycleplan.Revert{To: to, Applied: applied, Exists: exists, Restore: restore, Registry: r.registry, Check: r.checkLifecycleDown})
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: the database is at version %d, not above %d", ErrNothingToRevert, st.Current, to)
	}
	return &downPlan{targets: targets, exists: exists}, nil
}

// revert reverts one migration: data first, under the open window (so the
// downgraded documents stay writable), then validators and indexes (so a
// restored unique index meets documents that already have its field),
// then the ledger entry.
func (r *Runner) revert(ctx context.Context, t lifecycleplan.Target, exists map[string]bool) (Applied, error) {
	m := t.M
	start := time.Now()
	r.cfg.log.Log(events.MigrationStarted{Version: m.Version, File: m.File, Direction: "down"})
	a := Applied{Version: m.Version, Name: m.Name, File: m.File, Direction: "down", Unrestorable: lostData(m), NotReverted: t.Lost}
	opened, err := r.openForDown(ctx, t)
	if err != nil {
		return a, err
	}
	results, clientSide, err := r.runAll(ctx, m.Version, m.File, "down", opened)
	if err != nil {
		return a, err
	}
	// A backfill to m's version after a later up is a new one, counted
	// from zero, split anew: its progress (checkpoint, range plans and
	// range checkpoints) toward m's version or above goes.
	for _, c := range m.Collections {
		if len(c.Upgrade) > 0 {
			if err := r.state.Forget(ctx, c.Name, m.Version); err != nil {
				return a, err
			}
		}
	}
	pass := r.downPass(m)
	changes, downgraded, err := pass.First(ctx, t.Downs, r.state.Reopen)
	a.Documents = changes
	if err != nil {
		return a, revertStopped(m, err)
	}
	cmds, err := r.withLowering(ctx, t.Cmds, nil)
	if err != nil {
		return a, stoppedDowngrading(ctx, m, downgraded, true, err)
	}
	more, moreClient, err := r.runAll(ctx, m.Version, m.File, "down", cmds)
	if err != nil {
		return a, stoppedDowngrading(ctx, m, downgraded, true, err)
	}
	if err := pass.Late(ctx, t.Downs, a.Documents); err != nil {
		return a, revertStopped(m, err)
	}
	if err := r.revertRunOnce(ctx, m, &a); err != nil {
		return a, err
	}
	if err := r.forgetExpiry(finishing(ctx), m); err != nil { // down_lifecycle.go
		return a, err
	}
	a.Commands = append(results, more...)
	a.ClientSideValidators = uniqueStrings(append(clientSide, moreClient...))
	for _, c := range t.Cmds {
		if setsValidatorOptions(c) && r.window.DocVersionAt(c.Collection, m.Version-1) > 0 {
			if err := r.state.Reopen(finishing(ctx), c.Collection); err != nil {
				return a, err
			}
		}
	}
	if err := r.forget(finishing(ctx), m.Version); err != nil {
		return a, err
	}
	a.DurationMS = time.Since(start).Milliseconds()
	r.cfg.log.Log(events.MigrationDone{Version: m.Version, File: m.File, Direction: "down", Took: time.Since(start)})
	return a, nil
}

// openForDown are the collMods that send the window of each collection
// whose documents t downgrades (windowplan's DownOpen), each collection at
// constraint lowered first (constraint.go: the server refuses the
// validator change otherwise; the second withLowering of revert finds it
// strict).
func (r *Runner) openForDown(ctx context.Context, t lifecycleplan.Target) ([]Command, error) {
	opened, err := r.windows().DownOpen(ctx, t.M.Version, t.Downs)
	if err != nil {
		return nil, err
	}
	return r.withLowering(ctx, opened, nil)
}

func uniqueStrings(list []string) []string {
	var out []string
	for _, s := range list {
		out = appendUnique(out, s)
	}
	return out
}

// downPass is the document passes of a revert of m (internal/downgrade).
func (r *Runner) downPass(m *migration.Migration) downgradewalk.Pass {
	p := downgradewalk.Pass{DB: r.db, Registry: r.registry, Log: r.cfg.log, M: m}
	if r.hook != nil {
		p.BeforeWrite = func(v int64, n int) { r.hook("down.write", v, n) }
	}
	return p
}

// revertStopped is err, a document pass's, as the revert of m stopped
// part-way (m stays recorded).
func revertStopped(m *migration.Migration, err error) error {
	if pe, ok := err.(*downgradewalk.PassError); ok {
		return &RevertStoppedError{File: m.File, Version: m.Version, Done: pe.Done, Left: pe.Left, Resumes: pe.Resumes, Err: pe.Err}
	}
	return err
}
