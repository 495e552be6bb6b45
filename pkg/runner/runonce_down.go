package runner

import (
	"context"
	"fmt"

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
func runOnceNotes(m *migration.Migration) []string {
	var out []string
	for i := len(m.Run) - 1; i >= 0; i-- {
		op := m.Run[i]
		at := fmt.Sprintf("%s:%d: run operation %d", migration.DisplayName(m.File), op.Pos.Line, i+1)
		switch op.Kind {
		case migration.RunExtract:
			x := op.Extract
			out = append(out, fmt.Sprintf("%s: the documents of %s go back into %s.%s, then are deleted from %s", at, x.To, x.From, x.Array, x.To))
		case migration.RunRename:
			out = append(out, fmt.Sprintf("%s: %s is renamed back to %s", at, op.To, op.From))
		case migration.RunCopy:
			out = append(out, fmt.Sprintf("%s: the copy %s is dropped (%s is untouched)", at, op.To, op.From))
		case migration.RunDrop:
			out = append(out, fmt.Sprintf("%s: %s was dropped; down cannot restore it", at, op.Name))
		case migration.RunEmbed:
			out = append(out, reshape.EmbedDownNote(at, op.Embed))
		case migration.RunGo:
			out = append(out, reshape.GoDownNote(at, op))
		}
	}
	return out
}
