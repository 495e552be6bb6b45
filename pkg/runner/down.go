package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
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
	st, err := r.status(ctx, false)
	if err != nil {
		return nil, err
	}
	if st.Current == 0 {
		return nil, fmt.Errorf("%w: no migration is applied", ErrNothingToRevert)
	}
	prev := int64(0)
	for v := range st.applied {
		if v < st.Current {
			prev = max(prev, v)
		}
	}
	return r.DownTo(ctx, prev)
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

// downPlan is a revert that passed every check (lifecycleplan's Revert;
// these fields are what PlanDown reads).
type downPlan struct {
	targets []downTarget // newest first
	exists  map[string]bool
}

// downTarget is one migration to revert and the data it downgrades.
type downTarget struct {
	m     *migration.Migration
	cmds  []Command
	downs []downgrade
	// lost: what of m's lifecycle part cannot come back, a sentence each.
	lost []string
}

// downgrade is one collection's documents to take from version from to to.
type downgrade struct {
	coll     string
	from, to int64
	count    int64 // documents at from or above when checked
}

func (d downgrade) pending() downgradewalk.Pending {
	return downgradewalk.Pending{Coll: d.coll, From: d.from, To: d.to, Count: d.count}
}

// checkDown checks the whole revert to version to without writing
// anything (lifecycleplan's Revert), and returns what to do. PlanDown runs
// the same checks, so a dry run refuses exactly what down would.
func (r *Runner) checkDown(ctx context.Context, to int64) (*downPlan, error) {
	st, err := r.status(ctx, false)
	if err != nil {
		return nil, err
	}
	var drifted []MigrationStatus
	for _, ms := range st.Migrations {
		switch {
		case ms.State == StateMissing:
			// The state before any revert is computed from every earlier
			// file: without one, down would strip validators it cannot see.
			// --allow-drift does not help: the file is needed.
			return nil, &DriftError{Drifted: []MigrationStatus{ms}}
		case ms.State == StateDrifted:
			drifted = append(drifted, ms)
		}
	}
	if len(drifted) > 0 && !r.cfg.allowDrift {
		return nil, &DriftError{Drifted: drifted}
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
	dp := &downPlan{exists: exists}
	for _, t := range targets {
		dt := downTarget{m: t.M, cmds: t.Cmds, lost: t.Lost}
		for _, d := range t.Downs {
			dt.downs = append(dt.downs, downgrade{coll: d.Coll, from: d.From, to: d.To, count: d.Count})
		}
		dp.targets = append(dp.targets, dt)
	}
	return dp, nil
}

// revert reverts one migration: data first, under the open window (so the
// downgraded documents stay writable), then validators and indexes (so a
// restored unique index meets documents that already have its field),
// then the ledger entry.
func (r *Runner) revert(ctx context.Context, t downTarget, exists map[string]bool) (Applied, error) {
	m := t.m
	start := time.Now()
	r.cfg.log.Log(events.MigrationStarted{Version: m.Version, File: m.File, Direction: "down"})
	a := Applied{Version: m.Version, Name: m.Name, File: m.File, Direction: "down", Unrestorable: lostData(m), NotReverted: t.lost}
	opened, err := r.openForDown(ctx, t)
	if err != nil {
		return a, err
	}
	results, clientSide, err := r.runAll(ctx, m.Version, m.File, "down", opened)
	if err != nil {
		return a, err
	}
	for _, c := range m.Collections {
		if len(c.Upgrade) > 0 {
			if err := r.forgetBackfill(ctx, c.Name, m.Version); err != nil {
				return a, err
			}
		}
	}
	var downgraded []DowngradeCount
	for _, d := range t.downs {
		if err := r.reopen(ctx, d.coll); err != nil {
			return a, stoppedDowngrading(ctx, m, downgraded, false, err)
		}
		p := downgradewalk.NewProgress(r.cfg.log, m, d.pending())
		n, reread, err := r.downgradeDocuments(ctx, d.coll, d.from, p.Add)
		if n > 0 {
			left := int64(0)
			if err != nil {
				left = max(d.count-n, 0)
			}
			downgraded = append(downgraded, DowngradeCount{DocumentChange: DocumentChange{Collection: d.coll, From: d.from, To: d.to, Count: n}, Left: left})
		}
		if err != nil {
			if ctx.Err() != nil {
				return a, stoppedDowngrading(ctx, m, downgraded, false, err)
			}
			return a, &RevertStoppedError{File: m.File, Version: m.Version, Done: fmt.Sprintf("%s: downgraded %d documents", d.coll, n),
				Left: "nothing else was reverted", Resumes: "it continues with the documents left", Err: err}
		}
		a.Documents = append(a.Documents, DocumentChange{Collection: d.coll, From: d.from, To: d.to, Count: n})
		r.cfg.log.Log(events.DocumentsDowngraded{Version: m.Version, File: m.File, Collection: d.coll, From: d.from, To: d.to, Count: n, Reread: reread})
	}
	cmds, err := r.withLowering(ctx, t.cmds, nil)
	if err != nil {
		return a, stoppedDowngrading(ctx, m, downgraded, true, err)
	}
	more, moreClient, err := r.runAll(ctx, m.Version, m.File, "down", cmds)
	if err != nil {
		return a, stoppedDowngrading(ctx, m, downgraded, true, err)
	}
	if err := r.downgradeLate(ctx, m, t.downs, &a); err != nil {
		return a, err
	}
	if err := r.revertRunOnce(ctx, m, &a); err != nil {
		return a, err
	}
	if err := r.forgetExpiry(finishing(ctx), m); err != nil { // down_lifecycle.go
		return a, err
	}
	a.Commands = append(results, more...)
	a.ClientSideValidators = uniqueStrings(append(clientSide, moreClient...))
	for _, c := range t.cmds {
		if setsValidatorOptions(c) && r.docVersionAt(c.Collection, m.Version-1) > 0 {
			if err := r.reopen(finishing(ctx), c.Collection); err != nil {
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
// whose documents t downgrades, each collection at constraint lowered
// first (constraint.go: the server refuses the validator change
// otherwise; the second withLowering of revert finds it strict).
func (r *Runner) openForDown(ctx context.Context, t downTarget) ([]Command, error) {
	var opened []Command
	for _, d := range t.downs {
		w, err := r.withExtracts(ctx, d.coll, t.m.Version, r.windowAt(d.coll, t.m.Version))
		if err != nil {
			return nil, err
		}
		if w != nil {
			opened = append(opened, collModCommand(d.coll, bson.D{{Key: "validator", Value: w}}))
		}
	}
	return r.withLowering(ctx, opened, nil)
}

// downgradeLate makes one more downgrade pass over each collection of
// downs once the restoring collMod is in force: the release being rolled
// back still runs, and a document it wrote at a reverted version between
// the last pass and the collMod was accepted by the window then in force
// (the restored validator refuses the next ones where the server enforces
// it).
func (r *Runner) downgradeLate(ctx context.Context, m *migration.Migration, downs []downgrade, a *Applied) error {
	for _, d := range downs {
		p := downgradewalk.NewProgress(r.cfg.log, m, d.pending())
		n, reread, err := r.downgradeDocuments(ctx, d.coll, d.from, p.Add)
		if err != nil {
			return &RevertStoppedError{File: m.File, Version: m.Version, Err: err,
				Done: fmt.Sprintf("%s: its validators and indexes are reverted, but %d documents written at version %d meanwhile were downgraded", d.coll, n, d.from)}
		}
		if n == 0 {
			continue
		}
		for i := range a.Documents {
			if a.Documents[i].Collection == d.coll && a.Documents[i].From == d.from {
				a.Documents[i].Count += n
			}
		}
		r.cfg.log.Log(events.DocumentsDowngraded{Version: m.Version, File: m.File, Collection: d.coll, From: d.from, To: d.to, Count: n, Reread: reread})
	}
	return nil
}

// forgetBackfill removes coll's backfill progress toward version v or
// above (its checkpoint, range plans and range checkpoints): reverting v
// takes the documents back below it, so a backfill to that version number
// after a later up is a new one, counted from zero, split anew.
func (r *Runner) forgetBackfill(ctx context.Context, coll string, v int64) error {
	return r.state.Forget(ctx, coll, v)
}

func uniqueStrings(list []string) []string {
	var out []string
	for _, s := range list {
		out = appendUnique(out, s)
	}
	return out
}

// downgradeDocuments rewrites every document of coll at version v with
// the migration's downgrade (see package downgrade), calling progress
// after every batch with the documents it downgraded.
func (r *Runner) downgradeDocuments(ctx context.Context, coll string, v int64, progress func(int64)) (done, reread int64, err error) {
	w := downgradewalk.Walk{Coll: r.db.Collection(coll), Name: coll, Version: v, Registry: r.registry, Progress: progress}
	if r.hook != nil {
		w.BeforeWrite = func(n int) { r.hook("down.write", v, n) }
	}
	return w.Documents(ctx)
}
