package lint

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
)

// lintRun checks a migration's run-once operations against its own
// collections' part: a dropCollection with allowNonEmpty is a warning
// (its documents cannot come back), and so is an extract whose parent's
// upgrade in the same migration unsets the array (a lazy read would
// remove elements the extract has not moved yet), and an embed whose
// collection's upgrade in the same migration unsets or renames away the
// reference or a copied field.
func (r *Report) lintRun(m *migration.Migration) {
	for i, op := range m.Run {
		switch {
		case op.Kind == migration.RunEmbed:
			r.lintEmbed(m, i, op.Embed)
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

// lintEmbed: an upgrade step of the embed's collection, in the same
// migration, that unsets or renames the reference or a copied field
// would undo the embed at every lazy read or backfill.
func (r *Report) lintEmbed(m *migration.Migration, i int, e *migration.Embed) {
	c := m.Collection(e.Into)
	if c == nil {
		return
	}
	paths := append([]string{e.Copy.Via}, e.Paths()...)
	for _, s := range c.Upgrade {
		if s.Op != migration.OpUnset && s.Op != migration.OpRename {
			continue
		}
		for _, f := range s.Fields {
			for _, p := range paths {
				if f.Path != p && !strings.HasPrefix(p, f.Path+".") {
					continue
				}
				r.add(Problem{Severity: SeverityError, File: m.File, Line: s.Pos.Line, Column: s.Pos.Column, Collection: c.Name,
					Message: fmt.Sprintf("the upgrade of %s %ss %s, which run operation %d (embed from %s) reads or writes: every lazy read and backfill would undo the embed", c.Name, s.Op, f.Path, i+1, e.From),
					Hint:    "remove the step, or embed into a field the upgrade keeps"})
			}
		}
	}
}
