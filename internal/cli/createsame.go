package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
)

// sameNamed lists the migration files of dir, other than file, whose name
// (after the number, without the extension) is name: `create` of a name
// that exists under another number is most often a second run of the same
// command, or a branch that wrote the same migration.
func sameNamed(dir, file, name string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || n == file || !migration.IsMigrationFile(n) {
			continue
		}
		_, rest, ok := strings.Cut(n, "_")
		if ok && strings.TrimSuffix(rest, filepath.Ext(rest)) == name {
			out = append(out, n)
		}
	}
	return out
}

// warnSameNamed says that file's name exists under another number.
func warnSameNamed(o *output, dir, file, name string) {
	same := sameNamed(dir, file, name)
	if len(same) == 0 {
		return
	}
	o.warnf("%s has the same name as %s: two migrations named %s read alike in status and the ledger; if you meant that one, edit it (while it is not applied) and delete %s, or rename the new one",
		file, strings.Join(same, ", "), name, file)
}
