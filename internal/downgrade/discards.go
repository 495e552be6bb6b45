package downgrade

import (
	"fmt"
	"slices"

	"github.com/mongomig/mongomig/pkg/migration"
)

// Unrestorable lists the steps of m's upgrades whose discarded data no
// downgrade can bring back: every step that discards stored data but one
// whose data an earlier step kept in the document ([migration.Discard]
// Kept), which a downgrade can read back. With `discard: true` or not:
// the file allowing the loss does not undo it.
func Unrestorable(m *migration.Migration) []migration.Discard {
	var out []migration.Discard
	for _, d := range migration.Discards(m) {
		if d.Kept == nil {
			out = append(out, d)
		}
	}
	return out
}

// UnrestorableNote words one entry of [Unrestorable] for a plan: "0002
// removed comments from posts; down cannot restore them".
func UnrestorableNote(d migration.Discard) string {
	verb := "removed"
	if d.Op == migration.OpSet {
		verb = "replaced"
	}
	return fmt.Sprintf("%s:%d: %04d %s %s from %s (%s, upgrade step %d); down cannot restore them: documents upgraded past it lost that data",
		migration.DisplayName(d.File), d.Pos.Line, d.Migration, verb, d.Path, d.Collection, d.Op, d.Step+1)
}

// Reverted lists, sorted, the collections whose upgrades a down to
// version to reverts: those of the migrations of ms above to that upgrade
// documents (the collections whose document pass a down may run).
func Reverted(ms []*migration.Migration, to int64) []string {
	var out []string
	for _, m := range ms {
		if m.Version <= to {
			continue
		}
		for _, c := range m.Collections {
			if len(c.Upgrade) > 0 && !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}
