package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the file in a sandbox directory that the process serving it
// holds an exclusive lock on (flock(2)) for as long as the server runs,
// and that names the process (its pid). Two servers on one directory would
// each open the SQLite files behind the other's back and lose data, so a
// second [Start] on a locked directory fails instead. The lock goes with
// the process, however it ends; the file stays (removing it would let a
// third process lock a new file while the second still holds the old).
//
// The file may arrive with the directory (a clone of a repository that
// committed it), so it is never opened through a symbolic link, and one
// that is not a regular file holding a pid (or nothing) is refused rather
// than written: [Start] rewrites only what a sandbox wrote.
const LockFile = "mongomig-sandbox.lock"

// ErrDirInUse is returned (wrapped) by [Start] when another server, in
// this process or another one, serves the directory.
var ErrDirInUse = errors.New("sandbox directory in use")

// ErrNotALock is returned (wrapped) by [Start] when DIR/[LockFile] is a
// symbolic link, not a regular file, or holds something other than a pid:
// not a lock a sandbox wrote, so it is left as it is.
var ErrNotALock = errors.New("not a sandbox lock file")

// maxLockBytes is more than any pid line a sandbox writes.
const maxLockBytes = 32

// lockDir takes the directory's lock, or says who holds it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, created, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if !created {
		if err := checkLock(f, path); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sandbox: lock %s: %w", path, err)
		}
		holder := "another process"
		if pid, ok := lockPid(f); ok {
			holder = "process " + strconv.Itoa(pid)
			if pid == os.Getpid() {
				holder += " (this one)"
			}
		}
		return nil, fmt.Errorf("%w: %s serves %s (it holds %s); wait for it to finish or stop it, or use another directory",
			ErrDirInUse, holder, dir, LockFile)
	}
	// The pid is for the message above only: failing to write it is
	// harmless. The file is one this process created or one checkLock
	// found holding a pid line (a sandbox's), so truncating loses nothing.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// openLock opens path without following a symbolic link in its last
// component (O_NOFOLLOW), creating it if missing (created says so), and
// without blocking on a FIFO or a device.
func openLock(path string) (f *os.File, created bool, err error) {
	const flags = os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, flags, 0)
	}
	if err == nil {
		return f, false, nil
	}
	if fi, lerr := os.Lstat(path); lerr == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return nil, false, notALock(path, "is a symbolic link")
		case !fi.Mode().IsRegular():
			return nil, false, notALock(path, "is not a regular file ("+fi.Mode().Type().String()+")")
		}
	}
	return nil, false, fmt.Errorf("sandbox: lock %s: %w", path, err)
}

// checkLock refuses an existing lock file that a sandbox did not write:
// anything but a regular file with one link holding a pid line or nothing
// (lockPid reads at most maxLockBytes+1 bytes, so a large file is refused
// without being read whole).
func checkLock(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sandbox: lock %s: %w", path, err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return notALock(path, "is not a regular file ("+fi.Mode().Type().String()+")")
	case linkCount(fi) > 1:
		return notALock(path, "has other hard links")
	}
	if _, ok := lockPid(f); !ok && fi.Size() > 0 {
		return notALock(path, "holds something other than a pid ("+strconv.FormatInt(fi.Size(), 10)+" bytes)")
	}
	return nil
}

// notALock is the refusal of a lock file a sandbox did not write.
func notALock(path, what string) error {
	return fmt.Errorf("sandbox: %s %s: %w; a sandbox writes only a pid there, so it was left untouched and the sandbox not started: if the file is yours, use another directory, otherwise remove it (it may have come with a clone)",
		path, what, ErrNotALock)
}

// lockPid reads the pid a lock file holds.
func lockPid(f *os.File) (int, bool) {
	b := make([]byte, maxLockBytes+1)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	s := strings.TrimSpace(string(b[:n]))
	if n > maxLockBytes || s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	pid, err := strconv.Atoi(s)
	return pid, err == nil && pid > 0
}

// linkCount is the number of hard links of a file (1 where unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
