package downgrade

import (
	"fmt"

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
