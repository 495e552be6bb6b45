package cli

import (
	"regexp"
	"strings"
	"testing"
)

// internals are what FerretDB leaks of its implementation: Go value dumps,
// pointers and stack frames.
var internals = regexp.MustCompile(`&\{|\b0x[0-9a-f]{6,}|\.go:\d+ `)

// TestNoServerInternalsInOutput: the sandbox refuses validators with a
// message that dumps Go values; what up, status and validate print quotes
// the server without them.
func TestNoServerInternalsInOutput(t *testing.T) {
	// On an empty sandbox up sends create with a validator (the refusal
	// dumps Go values); on the sample data, collMod.
	for _, dir := range []string{t.TempDir(), sampleSandbox(t)} {
		for _, args := range [][]string{{"up"}, {"--json", "status", "--counts"}, {"status", "--counts"}, {"validate"}, {"--json", "validate"}, {"info"}, {"--json", "info"}} {
			r := run(t, false, sandboxArgs(dir, args...)...)
			if m := internals.FindString(r.stdout + r.stderr); m != "" {
				t.Errorf("%v shows server internals (%q):\n%s%s", args, m, r.stdout, r.stderr)
			}
		}
	}
	r := run(t, false, sandboxArgs(t.TempDir(), "--json", "up")...)
	if m := internals.FindString(r.stdout + r.stderr); m != "" || !strings.Contains(r.stdout, `support for field \"validator\" is not implemented yet`) {
		t.Errorf("up --json: internals %q, or the server's refusal is not quoted:\n%s%s", m, r.stdout, r.stderr)
	}
}

// TestCleanMessage: the last line of defence before a message is printed.
func TestCleanMessage(t *testing.T) {
	uri := "mongodb://ada:Passw0rd1@h/app?authMechanismProperties=AWS_SESSION_TOKEN:SessionTok"
	msg := "apply 0001: users: (InternalError) [msg_update.go:133 handler.(*Handler).updateDocument] duplicate; uri " + uri +
		"\n  done: nothing"
	want := "apply 0001: users: (InternalError) duplicate; uri mongodb://ada:***@h/app?authMechanismProperties=***\n  done: nothing"
	if got := cleanMessage(msg, uri); got != want {
		t.Errorf("cleanMessage\n got %q\nwant %q", got, want)
	}
}
