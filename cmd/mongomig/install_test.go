package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallFromAClone follows the README's install section: `go install
// ./cmd/mongomig` in a clone gives a binary whose --version names the
// clone's revision.
func TestInstallFromAClone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a git clone: the go command stamps no revision")
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v (git is needed to read the revision)", err)
	}
	bin := t.TempDir()
	install := exec.Command("go", "install", "./cmd/mongomig")
	install.Dir = root
	// As go's default (-buildvcs=auto) does in a clone; this machine's
	// GOFLAGS may say -buildvcs=false.
	install.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-buildvcs=true")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/mongomig: %v\n%s", err, out)
	}
	// The go command stamps the revision it reads with git; where it could
	// not (a checkout it does not recognise), there is nothing to show.
	info, err := exec.Command("go", "version", "-m", filepath.Join(bin, "mongomig")).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	if !strings.Contains(string(info), "vcs.revision=") {
		t.Skipf("the go command stamped no VCS revision in this checkout (go version -m shows none): --version can only say dev here")
	}
	out, err := exec.Command(filepath.Join(bin, "mongomig"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("mongomig --version: %v\n%s", err, out)
	}
	// Go 1.24 and later stamp a pseudo-version holding the revision
	// (v0.0.0-<time>-<12 hex digits>, +dirty with uncommitted changes);
	// earlier ones only the revision, which mongomig shows as devel+<rev>.
	rev := strings.TrimSpace(string(head))[:12]
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "mongomig version ") || !strings.Contains(got, rev) {
		t.Errorf("mongomig --version = %q, want the clone's revision %s in it", got, rev)
	}
}
