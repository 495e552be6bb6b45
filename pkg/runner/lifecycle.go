package runner

// Collection lifecycle (docs/lifecycle.md): collection options, index
// changes in place and declared rebuilds, views, and the expired backlog a
// new TTL index would delete at once (internal/expiry). Each command carries the
// features it needs (Command.Features); a feature the server lacks, or a
// change the server cannot make to what it holds (capped on an existing
// collection, say), refuses the plan with the reason before anything is
// sent ([LifecycleRefusedError]): never sent and failed.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

type (
	// LifecycleRefusal is one lifecycle command a plan cannot send.
	LifecycleRefusal = lifecycle.Refusal
	// LifecycleRefusedError is up (or its plan) refusing, before sending
	// anything, lifecycle commands the server cannot carry out.
	LifecycleRefusedError = lifecycle.RefusedError
)

// lifecycleCaps are the server's lifecycle features, probed once (in a
// scratch database) the first time a command needs one.
func (r *Runner) lifecycleCaps(ctx context.Context) (*probe.LifecycleSupport, error) {
	if r.cfg.lifecycle == nil {
		l, err := probe.Lifecycle(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errProbe, err)
		}
		r.cfg.lifecycle = l
	}
	return r.cfg.lifecycle, nil
}

// checkLifecycle refuses the planned commands that are Refused or need a
// feature the server lacks, naming each with its file position.
func (r *Runner) checkLifecycle(ctx context.Context, planned []PlannedMigration) error {
	var out []LifecycleRefusal
	for _, pm := range planned {
		m := r.migrationByVersion(pm.Version)
		for _, c := range pm.Commands {
			reason, err := lifecycle.Reason(c.Refused, c.Features, func() (*probe.LifecycleSupport, error) { return r.lifecycleCaps(ctx) })
			if err != nil {
				return err
			}
			if reason != "" {
				out = append(out, LifecycleRefusal{Version: pm.Version, File: pm.File, Pos: lifecycle.Pos(m, c.Collection, c.Index), Collection: c.Collection, Command: describeCommand(c), Reason: reason})
			}
		}
	}
	if len(out) > 0 {
		return &LifecycleRefusedError{Refusals: out}
	}
	return nil
}

// migrationCommands are the commands that apply m: each collection's
// create with its options first (so that its validator follows as a
// collMod), then [upCommands], then the index rebuilds and changes, the
// expired backlogs before the TTL indexes that would delete them, and the
// views last (they may read a collection created above).
func (r *Runner) migrationCommands(ctx context.Context, m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]Command, error) {
	if !lifecycle.Has(m) {
		return upCommands(m, exists, validator)
	}
	srv, err := r.serverCollections(ctx)
	if err != nil {
		return nil, err
	}
	pl := &lifecyclePlan{r: r, m: m, srv: srv, exists: exists}
	var cmds []Command
	for _, c := range m.Collections {
		if c.Options != nil {
			cmds = append(cmds, pl.optionCommands(c)...)
		}
	}
	up, err := upCommands(m, exists, validator)
	if err != nil {
		return nil, err
	}
	cmds = append(cmds, up...)
	for _, c := range m.Collections {
		more, err := pl.indexCommands(ctx, c)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, more...)
	}
	for _, v := range m.Views {
		cmds = append(cmds, pl.viewCommand(v))
	}
	return pl.withExpiry(ctx, cmds)
}

// serverColl is a collection (or view) as listCollections shows it.
type serverColl struct {
	Type    string
	Options bson.Raw
}

func (r *Runner) serverCollections(ctx context.Context) (map[string]serverColl, error) {
	specs, err := r.db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := make(map[string]serverColl, len(specs))
	for _, s := range specs {
		out[s.Name] = serverColl{Type: s.Type, Options: s.Options}
	}
	return out, nil
}

// lifecyclePlan builds one migration's lifecycle commands.
type lifecyclePlan struct {
	r      *Runner
	m      *migration.Migration
	srv    map[string]serverColl
	exists map[string]bool
}

func (pl *lifecyclePlan) optionCommands(c *migration.Collection) []Command {
	o := c.Options
	if !pl.exists[c.Name] {
		pl.exists[c.Name] = true
		cmd := createCommand(c.Name, o.Command())
		cmd.Features = lifecycle.CreateFeatures(o)
		return []Command{cmd}
	}
	held, onServer := pl.heldOptions(c.Name)
	if reason := lifecycle.OptionsRefused(c.Name, o, held, onServer); reason != "" {
		cmd := collModCommand(c.Name, o.Command())
		cmd.Refused = reason
		return []Command{cmd}
	}
	var cmds []Command
	for _, ch := range lifecycle.OptionChanges(o, held) {
		cmd := collModCommand(c.Name, ch.Fields)
		cmd.Features, cmd.Refused = ch.Features, ch.Refused
		cmds = append(cmds, cmd)
	}
	return cmds
}
