package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// precious writes a file outside the sandbox directory that a hostile
// link in it names, and returns its path and content.
func precious(t *testing.T) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "precious.txt")
	const content = "the only copy of something that matters\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, content
}

func unchanged(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s is now %q (%v), want it untouched: %q", path, got, err, want)
	}
}

// TestLockNeverFollowsALink: a symbolic link at DIR/mongomig-sandbox.lock
// (a committed one arrives with a clone) is refused, and its target is
// neither truncated nor given a pid. Before the fix
// Start opened the lock following links and wrote its pid into the target.
func TestLockNeverFollowsALink(t *testing.T) {
	target, content := precious(t)
	for name, link := range map[string]string{"lock": sandbox.LockFile, "database": "app.sqlite", "wal": "app.sqlite-wal"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			s, err := sandbox.Start(sandbox.Options{Dir: dir})
			if err == nil {
				_ = s.Stop(context.Background())
				t.Fatal("Start followed the link")
			}
			if !errors.Is(err, sandbox.ErrLinkInDir) || !strings.Contains(err.Error(), link+" is a symbolic link") {
				t.Fatalf("Start: %v, want ErrLinkInDir naming %s", err, link)
			}
			unchanged(t, target, content)
		})
	}
}

// TestLockRefusesForeignFiles: a regular DIR/mongomig-sandbox.lock that
// holds anything but a pid line was not written by a sandbox: Start
// refuses it and leaves it as it was (before the fix it was truncated).
func TestLockRefusesForeignFiles(t *testing.T) {
	big := strings.Repeat("x", 4096)
	for name, content := range map[string]string{"text": "the only copy\n", "large": big, "pid then text": "12\nsecret\n"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, sandbox.LockFile)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := sandbox.Start(sandbox.Options{Dir: dir})
			if err == nil {
				_ = s.Stop(context.Background())
				t.Fatal("Start wrote over a file that is not a sandbox lock")
			}
			if !errors.Is(err, sandbox.ErrNotALock) || !strings.Contains(err.Error(), "left untouched") {
				t.Fatalf("Start: %v, want ErrNotALock", err)
			}
			unchanged(t, path, content)
		})
	}
}

// TestLockRewritesItsOwnFile: a lock file a sandbox left (a pid, or empty)
// is reused, and holds this process's pid afterwards.
func TestLockRewritesItsOwnFile(t *testing.T) {
	for _, content := range []string{"", "4194304\n", "7"} {
		dir := t.TempDir()
		path := filepath.Join(dir, sandbox.LockFile)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := sandbox.Start(sandbox.Options{Dir: dir})
		if err != nil {
			t.Fatalf("Start on a lock file holding %q: %v", content, err)
		}
		unchanged(t, path, strconv.Itoa(os.Getpid())+"\n")
		_ = s.Stop(context.Background())
	}
}
