package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLinkInDir is returned (wrapped) by [Start] when a file the sandbox
// would open in its directory (a database file, its WAL, shared-memory or
// journal file, or [LockFile]) is a symbolic link or not a regular file.
// Such a file can arrive with a clone; following it would let the sandbox
// write to whatever it names.
var ErrLinkInDir = errors.New("sandbox directory holds a link")

// checkDirFiles refuses a directory whose sandbox files are not regular
// files, before anything in it is opened.
func checkDirFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sandbox: read %s: %w", dir, err)
	}
	for _, de := range entries {
		name := de.Name()
		if !isSandboxFile(name) || de.Type().IsRegular() {
			continue
		}
		what := "is not a regular file (" + de.Type().String() + ")"
		if de.Type()&os.ModeSymlink != 0 {
			what = "is a symbolic link"
		}
		return fmt.Errorf("sandbox: %s %s: %w; a sandbox creates its own files there and never follows a link, so nothing was opened: remove it (it may have come with a clone), or use another directory",
			filepath.Join(dir, name), what, ErrLinkInDir)
	}
	return nil
}

// isSandboxFile says whether name is a file the sandbox opens.
func isSandboxFile(name string) bool {
	if name == LockFile {
		return true
	}
	for _, suffix := range []string{".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}
