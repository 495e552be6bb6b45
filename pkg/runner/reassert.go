package runner

// The declared state after a takeover. The fence before each command
// cannot stop a holder paused between its fence and its send (SIGSTOP, a
// frozen VM) from sending late, after another process took the migration
// lock over: its createIndexes may bring back an index a later migration
// dropped, its collMod roll a validator back. The fence after each command
// tells the late sender (its error and result say the command was sent
// after the loss); a process that takes an expired migration lock over,
// and a late sender once it holds the lock again, compare the server's
// validators, levels, actions and indexes with what the applied migrations
// declare (listCollections, listIndexes) and put back what differs before
// anything else is applied.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/internal/declared"
	"github.com/mongomig/mongomig/internal/runlock"
	"github.com/mongomig/mongomig/pkg/events"
)

// reassertAfterTakeover checks the declared state when the migration lock
// ctx carries was taken over from an expired holder.
func (r *Runner) reassertAfterTakeover(ctx context.Context) error {
	l := runlock.Of(ctx)
	if l == nil || l.TakenOver == nil {
		return nil
	}
	return r.reassert(ctx, "this process took over the expired migration lock of "+l.TakenOver.Holder()+", which may have sent commands after it lost it")
}

// afterLateSend follows a run whose err says one of its commands was sent
// after its lease was lost: it takes the migration lock again (waiting the
// lock wait) and puts back the declared state the late command may have
// changed. err is returned, with what the check did.
func (r *Runner) afterLateSend(ctx context.Context, cmd string, err error) error {
	var pe *PartialError
	if !errors.As(err, &pe) || !pe.SentAfterLoss {
		return err
	}
	why := fmt.Sprintf("this process sent %s on %s after it lost the migration lock", describeCommand(pe.Failed), pe.Failed.Collection)
	rerr := r.withLock(withCommand(context.WithoutCancel(ctx), cmd), lockID, func(ctx context.Context) error {
		return r.reassert(ctx, why)
	})
	if rerr != nil {
		return fmt.Errorf("%w\n  checking the server's validators and indexes against the applied migrations afterwards failed: %v", err, rerr)
	}
	return fmt.Errorf("%w\n  the migration lock was taken again and the server's validators and indexes checked against the applied migrations (what differed was put back)", err)
}

// reassert compares the server's validators, levels, actions and indexes
// with what the applied migrations declare and sends what puts the
// declared state back, under the lock ctx carries.
func (r *Runner) reassert(ctx context.Context, why string) error {
	r.cfg.log.Log(events.StateChecking{Why: why})
	f, err := r.declaredFixes(ctx)
	if err != nil {
		return err
	}
	if f.Unchecked != "" {
		r.cfg.log.Log(events.StateUnchecked{Why: f.Unchecked})
		return nil
	}
	_, err = r.sendFixes(ctx, f)
	return err
}

// sendFixes logs f's differences and sends its commands, in order.
func (r *Runner) sendFixes(ctx context.Context, f fixes) ([]CommandResult, error) {
	for _, x := range f.Diffs {
		r.cfg.log.Log(events.StateDiffers(x))
	}
	var done []CommandResult
	for i, c := range f.Cmds {
		res, lost, err := r.send(ctx, f.Top, i, c)
		if err == nil {
			err = lost
		}
		if err != nil {
			return done, fmt.Errorf("put back the declared state of %s: %s: %w", c.Collection, describeCommand(c), err)
		}
		done = append(done, res)
		r.cfg.log.Log(events.StateReasserted{Collection: c.Collection, Summary: describeCommand(c)})
	}
	r.cfg.log.Log(events.StateMatches{Collections: f.Collections})
	return done, nil
}

// fixes is how the server differs from the declared state of the
// applied migrations and the commands that put it back.
type fixes = declared.Fixes

// declared reads the declared state (internal/declared).
func (r *Runner) declared() *declared.Source {
	return &declared.Source{DB: r.db, Migrations: r.migrations, Window: r.window, State: r.state}
}

// declaredFixes reads the ledger and the server's validators, levels,
// actions and indexes and compares them with what the applied
// migrations declare.
func (r *Runner) declaredFixes(ctx context.Context) (fixes, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return fixes{}, err
	}
	return r.declared().Fixes(ctx, ledger)
}
