package reshape

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/migration"
)

// DownNotes are the plan notes of reverting m's run-once operations
// ([Revert]), last first, each at its file position.
func DownNotes(m *migration.Migration) []string {
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
			out = append(out, EmbedDownNote(at, op.Embed))
		case migration.RunGo:
			out = append(out, GoDownNote(at, op))
		}
	}
	return out
}
