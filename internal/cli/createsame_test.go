package cli

import (
	"strings"
	"testing"
)

// TestCreateWarnsOfTheSameName: create of a name a file already has under
// another number writes the file and warns (issue 26: it said nothing).
func TestCreateWarnsOfTheSameName(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, false, "--dir", dir, "create", "add status"); r.code != ExitOK || r.stderr != "" {
		t.Fatalf("first create: exit %d\n%s", r.code, r.stderr)
	}
	r := run(t, false, "--dir", dir, "create", "add-status")
	if r.code != ExitOK || !strings.Contains(r.stdout, "0002_add_status.yaml") ||
		!strings.Contains(r.stderr, "warning: 0002_add_status.yaml has the same name as 0001_add_status.yaml") {
		t.Fatalf("second create: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, "--dir", dir, "create", "add status field"); r.stderr != "" {
		t.Errorf("another name warned: %s", r.stderr)
	}
}
