package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestAdviceAddsTheCommandLine: the libraries' errors and hints name no
// command or flag; the rendered message (stderr and --json's message) has
// the command line's advice in their place, also inside a wrapping error,
// and keeps the library's data.
func TestAdviceAddsTheCommandLine(t *testing.T) {
	holder := lease.Info{Owner: "ci", Host: "h", PID: 7}
	cases := []struct {
		name string
		err  error
		lib  string // in the library's message
		cli  string // in the rendered one instead
	}{
		{"drift", &runner.DriftError{Drifted: []runner.MigrationStatus{{Version: 1, File: "0001_a.yaml", State: runner.StateDrifted, LedgerChecksum: "sha256:1", Checksum: "sha256:2"}}},
			"put the change in a new migration, or accept it if",
			"put the change in a new migration (`mongomig create`), or rerun with --allow-drift if"},
		{"revert stopped", fmt.Errorf("down: %w", &runner.RevertStoppedError{File: "0002_b.yaml", Version: 2, Resumes: "it resumes", Err: errors.New("boom")}),
			"migration 2 stays recorded: a later down resumes the revert (it resumes)",
			"revert 0002_b.yaml: boom; migration 2 stays recorded: fix the cause and run `mongomig down` again (it resumes)"},
		{"downgrade stopped", &runner.RevertStoppedError{File: "0002_b.yaml", Version: 2, Done: "users: downgraded 3 documents", Left: "nothing else was reverted", Resumes: "it continues with the documents left", Err: errors.New("boom")},
			"a later down resumes the revert",
			"revert 0002_b.yaml: users: downgraded 3 documents, then: boom; nothing else was reverted and migration 2 stays recorded: fix the cause and run `mongomig down` again (it continues with the documents left)"},
		{"partway", &runner.PartwayError{File: "0002_b.yaml", Collection: "users", Field: "_mongomigBackfill", Count: 4},
			"a backfill of users finishes them, then down",
			"run `mongomig backfill --collection users` to finish them, then down (nothing was changed)"},
		{"lock timeout", &lease.TimeoutError{Name: lease.MigrationLock, Holder: holder, Waited: time.Second},
			"or a forced removal of the lease frees it",
			"its lease expires by itself, or run `mongomig unlock --force`"},
		{"backfill lease", &runner.BackfillRunningError{Collection: "users", Lease: &lease.TimeoutError{Name: "backfill:users", Holder: holder, Waited: time.Second}},
			"or a forced removal of the lease frees it",
			"or run `mongomig unlock --force backfill:users`"},
		{"live lease", &lease.LiveError{Name: "backfill:users", Holder: holder},
			"wait for the lease or use a forced removal",
			"the lease backfill:users is held by ci (host h, pid 7)"},
		{"lost", &lease.LostError{Name: lease.MigrationLock, Reason: lease.LostTokenGone},
			"(removed by a forced unlock,", "(removed by unlock --force,"},
		{"invalid file", fmt.Errorf("migration 0001_a.yaml is invalid: %w", version.ErrInvalidFile),
			"is invalid: the file has errors", "is invalid: the file has errors; run mongomig lint"},
		{"func not registered", fmt.Errorf("%w: norm (this program does not register it: see docs/lazy-upgrades.md)", version.ErrFuncNotRegistered),
			"(this program does not register it", "norm (build your own mongomig binary that registers it, see docs/lazy-upgrades.md)"},
		{"no change streams", fmt.Errorf("repair: %w", &integrity.ChangeStreamsError{Database: "app", Capability: probe.Capability{Reason: "change stream refused: (CommandNotSupported) Stage $changeStream is not supported yet in native pipeline"}}),
			"; check and repair on a schedule instead (docs/integrity.md)",
			"not supported yet in native pipeline); run `mongomig check` and `mongomig repair` on a schedule instead (docs/integrity.md#scheduling-the-job)"},
		{"interrupted", &runner.InterruptedError{Direction: runner.DirectionDown, Total: 1},
			"; running down again (to the same target) continues", "interrupted: 0 of 1 migrations reverted; run `mongomig down` again to continue"},
		{"interrupted with a target", rerunTo(&runner.InterruptedError{Direction: runner.DirectionUp}, "up", 2),
			"; running up again (to the same target) continues", "interrupted before anything was applied; run `mongomig up --to 2` again to continue"},
		{"hint", migration.ErrorList{{File: "0001_a.yaml", Msg: "file is empty", Hint: migration.HintFromTemplate}},
			"the create command writes", "; start from the template `mongomig create NAME` writes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.err.Error(), c.lib) || commandLineAdvice(c.err.Error()) {
				t.Fatalf("library message %q: want %q and no command line", c.err, c.lib)
			}
			for _, got := range []string{errorText(c.err, ""), failureMessage(c.err, "")} {
				if !strings.Contains(got, c.cli) || strings.Contains(got, c.lib) && c.lib != "is invalid: the file has errors" {
					t.Errorf("rendered %q: want %q in place of %q", got, c.cli, c.lib)
				}
			}
		})
	}
	if got := errorText(&lease.LiveError{Name: "x", Holder: holder}, ""); !strings.HasSuffix(got, "wait for the lease or use --force") {
		t.Errorf("live lease: %q", got)
	}
	lost := &lease.LostError{Name: "backfill:users", Reason: lease.LostTokenGone}
	if got := adviseIn(events.RangeLeaseLost{Collection: "users", Range: 2, Err: lost}.String(), lost); !strings.Contains(got, "range 2: lease backfill:users lost: its document no longer holds this process's token (removed by unlock --force,") {
		t.Errorf("range lease lost event: %q", got)
	}
	r := &lint.Report{Problems: []lint.Problem{{Hint: lint.HintNoFiles}}}
	adviseReport(r)
	if h := r.Problems[0].Hint; !strings.Contains(h, "create the first with `mongomig create NAME`") {
		t.Errorf("lint hint %q", h)
	}
}

// commandLineAdvice reports whether s names a mongomig command or a flag.
func commandLineAdvice(s string) bool {
	return strings.Contains(s, "`mongomig ") || strings.Contains(s, " --") || strings.Contains(s, "mongomig lint")
}
