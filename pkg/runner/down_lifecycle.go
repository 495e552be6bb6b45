package runner

// down of a migration's lifecycle part: internal/lifecycleplan builds the
// commands that put views, index changes, rebuilds and in-place options
// back (Planner.Down, within its Revert); they are checked against the
// server's features like up's (a command the server lacks refuses the
// revert before anything is sent).

import (
	"context"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// checkLifecycleDown refuses m's lifecycle down commands the server
// cannot carry out (checkLifecycle).
func (r *Runner) checkLifecycleDown(ctx context.Context, m *migration.Migration, cmds []Command) error {
	return r.checkLifecycle(ctx, []PlannedMigration{{Version: m.Version, File: m.File, Commands: cmds}})
}

// forgetExpiry removes the stored progress of m's expired-backlog
// deletions: a later up of m counts its backlog anew.
func (r *Runner) forgetExpiry(ctx context.Context, m *migration.Migration) error {
	if !lifecycle.Has(m) {
		return nil
	}
	return r.state.ForgetExpiry(ctx, m.Version)
}
