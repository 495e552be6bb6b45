package cli

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// helpExits lists the codes a command's --help gives after "Exit codes:".
func helpExits(t *testing.T, args ...string) []int {
	t.Helper()
	r := run(t, false, append(args, "--help")...)
	_, after, ok := strings.Cut(strings.Join(strings.Fields(r.stdout), " "), "Exit codes: ")
	if !ok {
		t.Fatalf("%v --help lists no exit codes:\n%s", args, r.stdout)
	}
	var codes []int
	for _, m := range regexp.MustCompile(`(?:^|; )(\d+) `).FindAllStringSubmatch(after, -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes
}

// TestHelpListsEveryExitCode: backfill, status and unlock --help list
// exactly the codes of commandExits plus the ones every command has (bad
// flags, a panic, a signal), each one exitCode returns; and each code the
// commands are made to return here is listed (issue 26: backfill --help
// left out 2 and 70, status and unlock others).
func TestHelpListsEveryExitCode(t *testing.T) {
	for cmd := range commandExits {
		codes := helpExits(t, cmd)
		for _, c := range codes {
			if !slices.Contains(exitCodes, c) {
				t.Errorf("%s --help lists %d, which exitCode never returns", cmd, c)
			}
		}
		for _, c := range []int{ExitUsage, ExitInternal, ExitInterrupted} {
			if !slices.Contains(codes, c) {
				t.Errorf("%s --help does not list %d: %v", cmd, c, codes)
			}
		}
		for _, d := range commandExits[cmd] {
			if !slices.Contains(codes, d.code) {
				t.Errorf("%s --help does not list %d: %v", cmd, d.code, codes)
			}
		}
	}
	dir := t.TempDir()
	if r := run(t, false, "--embedded", dir, "--dir", "../../migrations", "up", "--to", "1"); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	holdLock(t, dir)
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"status", "--check"}, ExitCheck},
		{[]string{"status", "--nosuch"}, ExitUsage},
		{[]string{"status", "--dir", "testdata/broken"}, ExitUsage},
		{[]string{"unlock"}, ExitFailure},
		{[]string{"unlock", "mongomi"}, ExitUsage},
		{[]string{"unlock", "--force"}, ExitOK},
		{[]string{"backfill", "--batch", "0"}, ExitUsage},
		{[]string{"backfill", "--collection", "nosuch"}, ExitUsage},
		{[]string{"backfill", "--collection", "users"}, ExitFailure}, // migration 3 of users is not applied yet
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(t, false, append([]string{"--embedded", dir, "--dir", "../../migrations"}, c.args...)...)
			if r.code != c.want {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, c.want, r.stdout, r.stderr)
			}
			if codes := helpExits(t, c.args[0]); !slices.Contains(codes, r.code) {
				t.Errorf("%s exited %d, which its --help does not list: %v", c.args[0], r.code, codes)
			}
		})
	}
}
