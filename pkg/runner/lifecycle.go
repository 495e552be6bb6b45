package runner

// Collection lifecycle (docs/lifecycle.md): collection options, index
// changes in place and declared rebuilds, views, and the expired backlog a
// new TTL index would delete at once (internal/expiry). internal/lifecycle
// decides and internal/lifecycleplan builds the commands from what the
// server holds, each with the features it needs (Command.Features); a
// feature the server lacks, or a change the server cannot make to what it
// holds (capped on an existing collection, say), refuses the plan with the
// reason before anything is sent ([LifecycleRefusedError]): never sent and
// failed.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
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
	return r.lifecycle.get(func() (*probe.LifecycleSupport, error) {
		l, err := probe.Lifecycle(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errProbe, err)
		}
		return l, nil
	})
}

// checkLifecycle refuses the planned commands that are Refused or need a
// feature the server lacks, naming each with its file position.
func (r *Runner) checkLifecycle(ctx context.Context, planned []PlannedMigration) error {
	var out []LifecycleRefusal
	for _, pm := range planned {
		refused, err := lifecycleplan.Refusals(r.migrationByVersion(pm.Version), pm.Version, pm.File, pm.Commands, func() (*probe.LifecycleSupport, error) { return r.lifecycleCaps(ctx) })
		if err != nil {
			return err
		}
		out = append(out, refused...)
	}
	if len(out) > 0 {
		return &LifecycleRefusedError{Refusals: out}
	}
	return nil
}

// planner plans the runner's migrations against its database.
func (r *Runner) planner() *lifecycleplan.Planner {
	return &lifecycleplan.Planner{DB: r.db, Migrations: r.migrations, Expiry: r.expiry().Command,
		Settings: r.validationSettings, Versioned: func(coll string) bool { return r.registry.Current(coll) > 0 }}
}

// migrationCommands are the commands that apply m (lifecycleplan's
// Commands: options, validators and indexes, expired backlogs, views).
func (r *Runner) migrationCommands(ctx context.Context, m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]Command, error) {
	return r.planner().Commands(ctx, m, exists, validator)
}

// serverColl is a collection (or view) as listCollections shows it.
type serverColl = lifecycleplan.ServerColl

func (r *Runner) serverCollections(ctx context.Context) (map[string]serverColl, error) {
	return r.planner().ServerCollections(ctx)
}
