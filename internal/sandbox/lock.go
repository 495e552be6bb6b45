package sandbox

import (
	"errors"
	"fmt"
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
const LockFile = "mongomig-sandbox.lock"

// ErrDirInUse is returned (wrapped) by [Start] when another server, in
// this process or another one, serves the directory.
var ErrDirInUse = errors.New("sandbox directory in use")

// lockDir takes the directory's lock, or says who holds it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sandbox: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sandbox: lock %s: %w", path, err)
		}
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = "process " + strconv.Itoa(pid)
				if pid == os.Getpid() {
					holder += " (this one)"
				}
			}
		}
		return nil, fmt.Errorf("%w: %s serves %s (it holds %s); wait for it to finish or stop it, or use another directory",
			ErrDirInUse, holder, dir, LockFile)
	}
	// The pid is for the message above only: failing to write it is harmless.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}
