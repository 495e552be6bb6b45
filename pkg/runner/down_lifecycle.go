package runner

// down of a migration's lifecycle part (internal/lifecycle, revert.go):
// the commands that put views, index changes, rebuilds and in-place
// options back, checked against the server's features like up's (a
// command the server lacks refuses the revert before anything is sent),
// and the sentences saying what cannot come back.

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// lifecycleDown are the commands reverting m's lifecycle part, and what
// they cannot bring back.
func (r *Runner) lifecycleDown(ctx context.Context, m *migration.Migration) ([]Command, []string, error) {
	if !lifecycle.Has(m) {
		return nil, nil, nil
	}
	srv, err := r.serverCollections(ctx)
	if err != nil {
		return nil, nil, err
	}
	steps, lost := lifecycle.Revert(r.migrations, m, func(coll string) (lifecycle.Held, bool) {
		s, ok := srv[coll]
		if !ok {
			return lifecycle.Held{}, false
		}
		return lifecycle.HeldOnServer(s.Options), true
	})
	var cmds []Command
	for _, st := range steps {
		var c Command
		switch st.Name {
		case "create":
			c = createCommand(st.Collection, st.Fields)
		case "drop":
			if _, ok := srv[st.Collection]; !ok {
				continue // not there: nothing to drop
			}
			c = newCommand(st.Collection, "drop", "", bson.D{{Key: "drop", Value: st.Collection}})
		case "dropIndexes":
			c = dropIndexCommand(st.Collection, st.Index)
		case "createIndexes":
			c = createIndexCommand(st.Collection, *st.Spec)
		default:
			c = newCommand(st.Collection, "collMod", st.Index, append(bson.D{{Key: "collMod", Value: st.Collection}}, st.Fields...))
		}
		c.Features = st.Features
		cmds = append(cmds, c)
	}
	if len(cmds) > 0 {
		if err := r.checkLifecycle(ctx, []PlannedMigration{{Version: m.Version, File: m.File, Commands: cmds}}); err != nil {
			return nil, nil, err
		}
	}
	return cmds, lost, nil
}

// forgetExpiry removes the stored progress of m's expired-backlog
// deletions: a later up of m counts its backlog anew.
func (r *Runner) forgetExpiry(ctx context.Context, m *migration.Migration) error {
	if !lifecycle.Has(m) {
		return nil
	}
	return r.state.ForgetExpiry(ctx, m.Version)
}
