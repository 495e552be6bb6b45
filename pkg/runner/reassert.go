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
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// declaredState is what the applied migrations declare for a collection.
type declaredState struct {
	name string
	// validator is the validator to put back (nil: none is declared, or
	// the server refused it and it is enforced client-side only); also is
	// another validator that is as declared (the plain schema of a window
	// a backfill proved closable).
	validator, also bson.D
	from            int64 // the migration that declared the validator
	level, action   string
	indexes         map[string]migration.Index
	indexFrom       map[string]int64
	dropped         map[string]int64 // name -> the migration that dropped it
}

// serverState is what listCollections and listIndexes say of a collection.
type serverState struct {
	exists        bool
	validator     bson.D
	level, action string
	indexes       map[string]bson.D // name -> key
	unique        map[string]bool
}

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
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return err
	}
	top := maxApplied(ledger)
	if reason := r.uncheckable(ledger, top); reason != "" {
		r.cfg.log.Log(events.StateUnchecked{Why: reason})
		return nil
	}
	states, err := r.declaredStates(ctx, ledger, top)
	if err != nil {
		return err
	}
	server, err := r.serverStates(ctx, states)
	if err != nil {
		return err
	}
	var cmds []Command
	for _, d := range states {
		cmds = append(cmds, r.reassertCommands(d, server[d.name])...)
	}
	for i, c := range cmds {
		_, lost, err := r.send(ctx, top, i, c)
		if err == nil {
			err = lost
		}
		if err != nil {
			return fmt.Errorf("put back the declared state of %s: %s: %w", c.Collection, describeCommand(c), err)
		}
		r.cfg.log.Log(events.StateReasserted{Collection: c.Collection, Summary: describeCommand(c)})
	}
	r.cfg.log.Log(events.StateMatches{Collections: len(states)})
	return nil
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
func (r *Runner) declaredStates(ctx context.Context, ledger map[int64]LedgerEntry, top int64) ([]declaredState, error) {
	byName := map[string]*declaredState{}
	var names []string
	for _, m := range r.migrations {
		if _, ok := ledger[m.Version]; !ok {
			continue
		}
		for _, c := range m.Collections {
			d := byName[c.Name]
			if d == nil {
				d = &declaredState{name: c.Name, indexes: map[string]migration.Index{}, indexFrom: map[string]int64{}, dropped: map[string]int64{}}
				byName[c.Name] = d
				names = append(names, c.Name)
			}
			if c.Validator != nil {
				d.from = m.Version
			}
			if c.ValidationLevel != "" {
				d.level = string(c.ValidationLevel)
			}
			if c.ValidationAction != "" {
				d.action = string(c.ValidationAction)
			}
			for _, x := range c.Indexes.Drop {
				delete(d.indexes, x.Name)
				delete(d.indexFrom, x.Name)
				d.dropped[x.Name] = m.Version
			}
			for _, idx := range c.Indexes.Create {
				d.indexes[idx.Name], d.indexFrom[idx.Name] = idx, m.Version
				delete(d.dropped, idx.Name)
			}
		}
	}
	clientSide := map[string]bool{}
	for _, e := range ledger {
		for _, c := range e.ClientSideValidators {
			clientSide[c] = true
		}
	}
	slices.Sort(names)
	out := make([]declaredState, 0, len(names))
	for _, name := range names {
		d := byName[name]
		if err := r.declaredValidator(ctx, d, top, clientSide[name]); err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

// declaredValidator sets d's validator: the window as of top, or its
// plain schema once the window was closed (or a backfill proved it may
// be), with the level and action the server holds with it.
func (r *Runner) declaredValidator(ctx context.Context, d *declaredState, top int64, clientSide bool) error {
	w := r.windowAt(d.name, top)
	if w == nil || clientSide {
		d.level, d.action = "", ""
		return nil
	}
	d.validator = w
	d.level = string(bsonx.OrDefault(migration.Level(d.level), migration.LevelStrict))
	d.action = string(bsonx.OrDefault(migration.Action(d.action), migration.ActionError))
	cv := r.docVersionAt(d.name, top)
	if cv == 0 {
		return nil
	}
	cp, err := r.readCheckpoint(ctx, d.name)
	if err != nil || cp == nil || cp.Target != cv {
		return err
	}
	switch plain := r.plainAt(d.name, top); {
	case cp.Tightened:
		d.validator = plain
	case cp.Proven:
		d.also = plain
	}
	return nil
}

// serverStates reads the options and indexes of the collections of states.
func (r *Runner) serverStates(ctx context.Context, states []declaredState) (map[string]serverState, error) {
	cur, err := r.db.ListCollections(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	var infos []struct {
		Name    string `bson:"name"`
		Options struct {
			Validator bson.D `bson:"validator"`
			Level     string `bson:"validationLevel"`
			Action    string `bson:"validationAction"`
		} `bson:"options"`
	}
	if err := cur.All(ctx, &infos); err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := map[string]serverState{}
	for _, in := range infos {
		out[in.Name] = serverState{exists: true, validator: in.Options.Validator, level: in.Options.Level, action: in.Options.Action}
	}
	for _, d := range states {
		s, ok := out[d.name]
		if !ok {
			continue
		}
		if s.indexes, s.unique, err = r.serverIndexes(ctx, d.name); err != nil {
			return nil, err
		}
		out[d.name] = s
	}
	return out, nil
}

func (r *Runner) serverIndexes(ctx context.Context, coll string) (map[string]bson.D, map[string]bool, error) {
	cur, err := r.db.Collection(coll).Indexes().List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	var specs []struct {
		Name   string `bson:"name"`
		Key    bson.D `bson:"key"`
		Unique bool   `bson:"unique"`
	}
	if err := cur.All(ctx, &specs); err != nil {
		return nil, nil, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	keys, unique := map[string]bson.D{}, map[string]bool{}
	for _, s := range specs {
		keys[s.Name], unique[s.Name] = s.Key, s.Unique
	}
	return keys, unique, nil
}
