package runner

import (
	"context"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// revertRunOnce undoes m's run-once operations (pkg/reshape Revert) under
// the lock ctx carries: after m's validators and indexes are reverted (so
// the parent of an extract has the validator that accepted its embedded
// array again) and before m's ledger entry is removed. An interrupted
// revert resumes on the next down: m stays recorded until it finished.
func (r *Runner) revertRunOnce(ctx context.Context, m *migration.Migration, a *Applied) error {
	if len(m.Run) == 0 {
		return nil
	}
	res, err := reshape.Revert(ctx, r.db, m, reshape.Options{Log: r.cfg.log, Hook: r.hook, Registry: r.registry})
	a.Run = append(a.Run, res...)
	if err != nil {
		return &RevertStoppedError{File: m.File, Version: m.Version, Resumes: "it resumes", Err: err}
	}
	return nil
}

// runOnceNotes are the plan notes of reverting m's run-once operations.
var runOnceNotes = reshape.DownNotes
