package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunSaysWhatAMigrationWithoutCommandsDoes: a migration that sends
// no command is described by what it declares, in the plan's direction;
// "document upgrades only" is said only of one with upgrade steps.
func TestDryRunSaysWhatAMigrationWithoutCommandsDoes(t *testing.T) {
	migs := t.TempDir()
	for name, body := range map[string]string{
		"0001_upgrade.yaml":   "collections:\n  users:\n    upgrade:\n      - set: {a: 1}\n    downgrade:\n      - unset: a\n",
		"0002_downgrade.yaml": "collections:\n  users:\n    downgrade:\n      - unset: b\n",
		"0003_examples.yaml":  "collections:\n  users:\n    examples:\n      - before: {name: Ada}\n        after: {name: Ada}\n",
	} {
		if err := os.WriteFile(filepath.Join(migs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "db")
	plan := func(want map[string]string, args ...string) {
		t.Helper()
		r := run(t, false, append([]string{"--embedded", dir, "--dir", migs}, args...)...)
		if r.code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		for file, line := range want {
			if !strings.Contains(r.stdout, file+"\n  "+line+"\n") {
				t.Errorf("%v: %s is not described as %q:\n%s", args, file, line, r.stdout)
			}
		}
	}
	plan(map[string]string{
		"0001_upgrade.yaml":   "(no commands: document upgrades only)",
		"0002_downgrade.yaml": "(no commands: downgrade steps only)",
		"0003_examples.yaml":  "(no commands)",
	}, "up", "--dry-run")
	if r := run(t, false, "--embedded", dir, "--dir", migs, "up"); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	plan(map[string]string{
		"0001_upgrade.yaml":   "(no commands: document downgrades only)",
		"0002_downgrade.yaml": "(no commands: document downgrades only)",
		"0003_examples.yaml":  "(no commands)",
	}, "down", "--dry-run", "--to", "0")
}
