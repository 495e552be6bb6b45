package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Kinds of entry FuzzLockFile puts at DIR/mongomig-sandbox.lock.
const (
	lockAbsent = iota
	lockRegular
	lockLinkToFile
	lockDanglingLink
	lockDirectory
	lockFIFO
	lockHardLink
	lockKinds
)

// FuzzLockFile: whatever DIR/mongomig-sandbox.lock is (missing, a regular
// file of any content, a link to a file or to nothing, a directory, a
// FIFO, a second hard link), lockDir returns without blocking, never
// changes a file outside the directory or one holding other than a pid,
// and when it succeeds the lock file is a regular file holding this
// process's pid.
func FuzzLockFile(f *testing.F) {
	for kind := range lockKinds {
		f.Add(uint8(kind), []byte("12345\n"))
		f.Add(uint8(kind), []byte("the only copy of something that matters\n"))
	}
	f.Add(uint8(lockRegular), []byte(""))
	f.Add(uint8(lockRegular), []byte(" 99 \n"))
	f.Add(uint8(lockRegular), []byte("-1\n"))
	f.Add(uint8(lockRegular), []byte("0\n"))
	f.Add(uint8(lockRegular), []byte("123456789012345678901234567890123\n"))
	f.Fuzz(func(t *testing.T, kind uint8, content []byte) {
		dir, outside := t.TempDir(), t.TempDir()
		path := filepath.Join(dir, LockFile)
		target := filepath.Join(outside, "precious")
		if err := os.WriteFile(target, content, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind % lockKinds {
		case lockRegular:
			err = os.WriteFile(path, content, 0o644)
		case lockLinkToFile:
			err = os.Symlink(target, path)
		case lockDanglingLink:
			err = os.Symlink(filepath.Join(outside, "missing"), path)
		case lockDirectory:
			err = os.Mkdir(path, 0o755)
		case lockFIFO:
			err = syscall.Mkfifo(path, 0o644)
		case lockHardLink:
			err = os.Link(target, path)
		}
		if err != nil {
			t.Skip(err) // the file system refuses the kind (no FIFOs, no links)
		}
		lock, err := lockDir(dir)
		if got, rerr := os.ReadFile(target); rerr != nil || string(got) != string(content) {
			t.Fatalf("kind %d: the file outside the directory changed to %q (%v)", kind%lockKinds, got, rerr)
		}
		if _, serr := os.Lstat(filepath.Join(outside, "missing")); serr == nil {
			t.Fatalf("kind %d: a file was created through a dangling link", kind%lockKinds)
		}
		if err != nil {
			if !errors.Is(err, ErrNotALock) && !errors.Is(err, ErrDirInUse) {
				t.Fatalf("kind %d: lockDir: %v, want ErrNotALock", kind%lockKinds, err)
			}
			if kind%lockKinds == lockRegular {
				if got, _ := os.ReadFile(path); string(got) != string(content) {
					t.Fatalf("refused, yet the lock file changed from %q to %q", content, got)
				}
			}
			return
		}
		defer lock.Close()
		switch kind % lockKinds {
		case lockAbsent, lockRegular:
		default:
			t.Fatalf("kind %d: lockDir accepted it", kind%lockKinds)
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("lock file after lockDir: %v %v", fi, err)
		}
		if got, _ := os.ReadFile(path); string(got) != strconv.Itoa(os.Getpid())+"\n" {
			t.Fatalf("lock file holds %q, want this process's pid", got)
		}
	})
}
