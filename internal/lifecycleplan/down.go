package lifecycleplan

// A down's plan: for each migration it reverts, newest first, the
// commands that put the validators and indexes back (cmddoc.Down, with
// constraint sent as strict) and those reverting its lifecycle part
// (internal/lifecycle, revert.go: views, index changes, rebuilds and
// in-place options, from what the server holds, with the features each
// needs), the documents it downgrades first (internal/downgrade's
// checks), and the sentences saying what cannot come back. It writes
// nothing: PlanDown shows it, and down sends it under the migration lock.

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Target is one migration a down reverts: its commands, the documents it
// downgrades before them, and what of its lifecycle part cannot come back
// (a sentence each).
type Target struct {
	M     *migration.Migration
	Cmds  []cmddoc.Command
	Downs []downgrade.Pending
	Lost  []string
}

// Revert is what a down to version To is planned from: the migrations
// Applied, the collections the database has (Exists), the validator
// Restore gives a collection as of a migration, and the Registry of the
// documents' versions. Check refuses a migration's lifecycle commands the
// server cannot carry out (before anything is sent).
type Revert struct {
	To       int64
	Applied  func(v int64) bool
	Exists   map[string]bool
	Restore  func(coll string, at int64) bson.D
	Registry *version.Registry
	Check    func(ctx context.Context, m *migration.Migration, cmds []cmddoc.Command) error
}

// Revert checks the whole revert without writing anything and returns
// its targets, newest first (none: nothing is applied above rv.To).
func (p *Planner) Revert(ctx context.Context, rv Revert) ([]Target, error) {
	var out []Target
	for i := len(p.Migrations) - 1; i >= 0; i-- {
		m := p.Migrations[i]
		if !rv.Applied(m.Version) || m.Version <= rv.To {
			continue
		}
		cmds, unknown := cmddoc.Down(p.Migrations, m, maps.Clone(rv.Exists), rv.Restore)
		cmds = StrictForConstraint(cmds)
		if len(unknown) > 0 {
			return nil, fmt.Errorf("cannot revert %s: it dropped %s, which no earlier migration created, so its definition is unknown; recreate it by hand or add it to an earlier migration (nothing was changed)",
				m.File, strings.Join(unknown, ", "))
		}
		life, lost, err := p.Down(ctx, m)
		if err != nil {
			return nil, err
		}
		if len(life) > 0 {
			if err := rv.Check(ctx, m, life); err != nil {
				return nil, err
			}
		}
		downs, err := downgrade.Check(ctx, p.DB, rv.Registry, m, rv.Exists)
		if err != nil {
			return nil, err
		}
		out = append(out, Target{M: m, Cmds: append(cmds, life...), Downs: downs, Lost: lost})
	}
	return out, nil
}

// Down are the commands reverting m's lifecycle part, from what the
// server holds, each with the features it needs, and what they cannot
// bring back.
func (p *Planner) Down(ctx context.Context, m *migration.Migration) ([]cmddoc.Command, []string, error) {
	if !lifecycle.Has(m) {
		return nil, nil, nil
	}
	srv, err := p.ServerCollections(ctx)
	if err != nil {
		return nil, nil, err
	}
	steps, lost := lifecycle.Revert(p.Migrations, m, func(coll string) (lifecycle.Held, bool) {
		s, ok := srv[coll]
		if !ok {
			return lifecycle.Held{}, false
		}
		return lifecycle.HeldOnServer(s.Options), true
	})
	var cmds []cmddoc.Command
	for _, st := range steps {
		var c cmddoc.Command
		switch st.Name {
		case "create":
			c = cmddoc.Create(st.Collection, st.Fields)
		case "drop":
			if _, ok := srv[st.Collection]; !ok {
				continue // not there: nothing to drop
			}
			c = cmddoc.New(st.Collection, "drop", "", bson.D{{Key: "drop", Value: st.Collection}})
		case "dropIndexes":
			c = cmddoc.DropIndex(st.Collection, st.Index)
		case "createIndexes":
			c = cmddoc.CreateIndex(st.Collection, *st.Spec)
		default:
			c = cmddoc.New(st.Collection, "collMod", st.Index, append(bson.D{{Key: "collMod", Value: st.Collection}}, st.Fields...))
		}
		c.Features = st.Features
		cmds = append(cmds, c)
	}
	return cmds, lost, nil
}
