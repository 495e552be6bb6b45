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

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
)

// reassertAfterTakeover checks the declared state when the migration lock
// ctx carries was taken over from an expired holder.
func (r *Runner) reassertAfterTakeover(ctx context.Context) error {
	l := lockOf(ctx)
	if l == nil || l.takenOver == nil {
		return nil
	}
	return r.reassert(ctx, "this process took over the expired migration lock of "+l.takenOver.Holder()+", which may have sent commands after it lost it")
}

// lockOf is the lease ctx carries when it is one of the runner's.
func lockOf(ctx context.Context) *held {
	l, _ := lease.From(ctx)
	h, _ := l.(*held)
	return h
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
	if f.unchecked != "" {
		r.cfg.log.Log(events.StateUnchecked{Why: f.unchecked})
		return nil
	}
	_, err = r.sendFixes(ctx, f)
	return err
}

// sendFixes logs f's differences and sends its commands, in order.
func (r *Runner) sendFixes(ctx context.Context, f fixes) ([]CommandResult, error) {
	for _, x := range f.diffs {
		r.cfg.log.Log(events.StateDiffers(x))
	}
	var done []CommandResult
	for i, c := range f.cmds {
		res, lost, err := r.send(ctx, f.top, i, c)
		if err == nil {
			err = lost
		}
		if err != nil {
			return done, fmt.Errorf("put back the declared state of %s: %s: %w", c.Collection, describeCommand(c), err)
		}
		done = append(done, res)
		r.cfg.log.Log(events.StateReasserted{Collection: c.Collection, Summary: describeCommand(c)})
	}
	r.cfg.log.Log(events.StateMatches{Collections: f.collections})
	return done, nil
}

// fixes is how the server differs from the declared state of the applied
// migrations (up to top) and the commands that put it back; unchecked
// says why the declared state cannot be known.
type fixes struct {
	top         int64
	collections int
	diffs       []serverstate.Difference
	cmds        []Command
	unchecked   string
}

// declaredFixes reads the server's validators, levels, actions and
// indexes and compares them with what the applied migrations declare.
func (r *Runner) declaredFixes(ctx context.Context) (fixes, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return fixes{}, err
	}
	f := fixes{top: maxApplied(ledger)}
	if f.top == 0 {
		return f, nil
	}
	if f.unchecked = r.uncheckable(ledger, f.top); f.unchecked != "" {
		return f, nil
	}
	states, err := r.declaredStates(ctx, ledger, f.top)
	if err != nil {
		return f, err
	}
	names := make([]string, len(states))
	for i, d := range states {
		names[i] = d.Name
	}
	server, err := serverstate.Read(ctx, r.db, names)
	if err != nil {
		return f, err
	}
	f.collections = len(states)
	for _, d := range states {
		diffs, cmds := r.reassertCommands(d, server[d.Name])
		f.diffs, f.cmds = append(f.diffs, diffs...), append(f.cmds, cmds...)
	}
	return f, nil
}

// uncheckable says why the declared state cannot be known: an applied
// migration whose file is missing or changed, or a file below the top one
// that is not applied.
func (r *Runner) uncheckable(ledger map[int64]LedgerEntry, top int64) string {
	for v, e := range ledger {
		m := r.migrationByVersion(v)
		if m == nil {
			return fmt.Sprintf("migration %d (%s) is applied but its file is not in this directory (another release applied it)", v, e.File)
		}
		if !sameSchema(e, m) {
			return m.File + " changed since it was applied"
		}
	}
	for _, m := range r.migrations {
		if _, ok := ledger[m.Version]; !ok && m.Version < top {
			return fmt.Sprintf("%s is not applied but migration %d is", m.File, top)
		}
	}
	return ""
}

// declaredStates lists what the applied migrations (up to top) declare,
// per collection, in name order.
func (r *Runner) declaredStates(ctx context.Context, ledger map[int64]LedgerEntry, top int64) ([]serverstate.Declared, error) {
	states := serverstate.Declare(r.migrations, func(v int64) bool { _, ok := ledger[v]; return ok })
	clientSide := map[string]bool{}
	for _, e := range ledger {
		for _, c := range e.ClientSideValidators {
			clientSide[c] = true
		}
	}
	for i := range states {
		if err := r.declaredValidator(ctx, &states[i], top, clientSide[states[i].Name]); err != nil {
			return nil, err
		}
	}
	return states, nil
}

// declaredValidator sets d's validator: the window as of top, or its
// plain schema once the window was closed (or a backfill proved it may
// be), with the level and action the server holds with it.
func (r *Runner) declaredValidator(ctx context.Context, d *serverstate.Declared, top int64, clientSide bool) error {
	w := r.windowAt(d.Name, top)
	if w == nil || clientSide {
		d.Level, d.Action = "", ""
		return nil
	}
	// A level or action no applied migration declares is the collection's
	// own (docs/file-format.md: an omitted one keeps the server's): d keeps
	// it empty, and Compare leaves it alone.
	d.Validator = w
	cv := r.docVersionAt(d.Name, top)
	if cv == 0 {
		return nil
	}
	cp, err := r.readCheckpoint(ctx, d.Name)
	if err != nil || cp == nil || cp.Target != cv {
		return err
	}
	switch plain := r.plainAt(d.Name, top); {
	case cp.Tightened:
		d.Validator = plain
	case cp.Proven:
		d.Also = plain
	}
	return nil
}

// reassertCommands are how s, what the server holds, differs from d and
// the commands that put d back.
func (r *Runner) reassertCommands(d serverstate.Declared, s serverstate.Collection) ([]serverstate.Difference, []Command) {
	diffs, fixes := serverstate.Compare(d, s)
	return diffs, cmddoc.Fixes(d.Name, fixes)
}
