package cli

import (
	"strings"
	"testing"
)

func TestFlagsFirst(t *testing.T) {
	app := newApp(&env{})
	for _, c := range []struct{ in, want string }{
		{"create invoice --json", "create --json invoice"},
		{"--dir m create invoice --dir other", "--dir m create --dir other invoice"},
		{"unlock backfill:users --force", "unlock --force backfill:users"},
		{"up --to 7 --dry-run", "up --to 7 --dry-run"},
		{"status extra --db x", "status --db x extra"},
		{"status extra --db=x", "status --db=x extra"},
		{"create -- --json --dir", "create -- --json --dir"},
		{"create a -- --json", "create -- a --json"},
		{"create a --dir m -- -x", "create --dir m -- a -x"},
		{"nosuch a --json", "nosuch a --json"},
		{"--json", "--json"},
	} {
		got := strings.Join(flagsFirst(app, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("flagsFirst(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
