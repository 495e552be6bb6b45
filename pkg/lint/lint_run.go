package lint

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/migration"
)

// lintRun checks a migration's run-once operations against its own
// collections' part: a dropCollection with allowNonEmpty is a warning
// (its documents cannot come back), and so is an extract whose parent's
// upgrade in the same migration unsets the array (a lazy read would
// remove elements the extract has not moved yet).
func (r *Report) lintRun(m *migration.Migration) {
	for i, op := range m.Run {
		switch {
		case op.Kind == migration.RunDrop && op.AllowNonEmpty:
			r.add(Problem{Severity: SeverityWarning, File: m.File, Line: op.Pos.Line, Column: op.Pos.Column, Collection: op.Name,
				Message: fmt.Sprintf("run operation %d drops %s with whatever documents it holds (allowNonEmpty: true): they cannot come back", i+1, op.Name),
				Hint:    "copy or extract them first if they are still needed; remove allowNonEmpty to have up refuse while documents remain"})
		case op.Kind == migration.RunExtract:
			c := m.Collection(op.Extract.From)
			if c == nil {
				continue
			}
			for _, s := range c.Upgrade {
				for _, f := range s.Fields {
					if s.Op == migration.OpUnset && f.Path == op.Extract.Array {
						r.add(Problem{Severity: SeverityError, File: m.File, Line: s.Pos.Line, Column: s.Pos.Column, Collection: c.Name,
							Message: fmt.Sprintf("the upgrade of %s unsets %s, which run operation %d extracts: a lazy read or a backfill would remove elements before they are moved", c.Name, f.Path, i+1),
							Hint:    "remove the unset step: the extract removes the array itself, after moving its elements"})
					}
				}
			}
		}
	}
}
