package cli

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
)

// sandboxFileRegular refuses (exit 2) a sandbox file in an --embedded
// directory that is a symbolic link or not a regular file: a committed
// link at DIR/mongomig-sandbox.lock or DIR/app.sqlite would make the
// sandbox write to whatever it names. Dot files are never opened, so they
// are left alone.
func sandboxFileRegular(source, dir string, de fs.DirEntry) error {
	name := de.Name()
	if strings.HasPrefix(name, ".") || de.Type().IsRegular() {
		return nil
	}
	what := "is not a regular file"
	if de.Type()&fs.ModeSymlink != 0 {
		what = "is a symbolic link"
	}
	return usageError(fmt.Errorf("%s %s: %s %s: the sandbox creates its files there itself and never follows a link, so nothing was opened or written; remove it (it may have come with a clone, as a committed file), or name another directory",
		source, dir, migration.DisplayName(filepath.Join(dir, name)), what))
}
