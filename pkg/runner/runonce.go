package runner

import (
	"context"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// runOnce runs m's run-once operations (pkg/reshape) under the lock ctx
// carries, after m's commands and before its ledger entry, and updates
// exists for the migrations after m.
func (r *Runner) runOnce(ctx context.Context, m *migration.Migration, exists map[string]bool) ([]reshape.OpResult, error) {
	if len(m.Run) == 0 {
		return nil, nil
	}
	res, err := reshape.Run(ctx, r.db, m, reshape.Options{Log: r.cfg.log, Hook: r.hook, Registry: r.registry})
	if err != nil {
		return res, err
	}
	for _, op := range m.Run {
		switch op.Kind {
		case migration.RunRename:
			delete(exists, op.From)
			exists[op.To] = true
		case migration.RunDrop:
			delete(exists, op.Name)
		case migration.RunEmbed, migration.RunGo: // create no collection
		default:
			exists[op.Collections()[1]] = true
		}
	}
	return res, nil
}
