package cli

import (
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes path by rendering into a new temporary file in
// the same directory and renaming it over path: a symlink committed at
// path (a repository's report.md pointing at ../../precious) is replaced,
// never followed, and a failed render leaves path as it was.
func writeFileAtomic(path string, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = render(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
