package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagLimitsRefused (issue 25, item 13): `backfill --rate NaN`, the
// analyze thresholds given NaN, and `--lock-lease 2562047h` were accepted
// (every comparison with NaN is false; the lease never expired); each is
// now exit 2 before anything connects, naming the flag.
func TestFlagLimitsRefused(t *testing.T) {
	sandboxDir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill", "--rate", "NaN"}, "--rate NaN: give a finite number"},
		{[]string{"backfill", "--rate", "Inf"}, "--rate +Inf: give a finite number"},
		{[]string{"analyze", "--size-warn", "NaN"}, "--size-warn NaN: give a finite number"},
		{[]string{"analyze", "--sparse-below", "nan"}, "--sparse-below NaN: give a finite number"},
		{[]string{"analyze", "--growth-warn", "NaN"}, "--growth-warn NaN: give a finite number"},
		{[]string{"up", "--lock-lease", "2562047h"}, "--lock-lease 2562047h0m0s: give at most 24h0m0s"},
		{[]string{"down", "--lock-lease", "25h"}, "--lock-lease 25h0m0s: give at most 24h0m0s"},
		{[]string{"backfill", "--lock-lease", "2562047h"}, "--lock-lease 2562047h0m0s: give at most 24h0m0s"},
	} {
		r := run(t, false, append([]string{"--embedded", sandboxDir, "--dir", "../../migrations"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if r := run(t, false, "--embedded", sandboxDir, "--dir", "../../migrations", "up", "--dry-run", "--lock-lease", "24h"); r.code != ExitOK {
		t.Errorf("--lock-lease 24h (the cap): exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCreateNameTooLong (issue 25, item 13): a 300-character name made a
// file name the file system refuses, exit 1 ("file name too long"); it is
// a usage error saying how long the name may be, and nothing is written.
func TestCreateNameTooLong(t *testing.T) {
	dir := t.TempDir()
	r := run(t, false, "--dir", dir, "create", strings.Repeat("a", 300))
	if want := "migration name is 300 characters long: the file name 0001_aaaa"; r.code != ExitUsage || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "310 bytes, more than the 255 a file system allows; shorten the name to at most 245 characters") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("create wrote %v", entries)
	}
	if r := run(t, false, "--dir", dir, "create", strings.Repeat("a", 245)); r.code != ExitOK {
		t.Errorf("a 245-character name (the longest that fits): exit %d, stderr %q", r.code, r.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "0001_*.yaml")); len(files) != 1 {
		t.Errorf("files: %v", files)
	}
}
