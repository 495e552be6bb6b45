package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestLibraryErrorsWordedForTheCommand: the libraries' refusals carry data
// (the func, the file, the documents); the command line words them with
// what to run, and errors.Is and the exit code still see the library's
// error.
func TestLibraryErrorsWordedForTheCommand(t *testing.T) {
	down := funcMissing(&version.FuncMissingError{Collection: "people", File: "0001_name.yaml's downgrade", Func: "restoreName", Version: 1, Downgrade: true, Documents: 4}, "down", "")
	want := "upgrade function not registered: people: 0001_name.yaml's downgrade declares `func: restoreName`, which this mongomig binary does not have, so down cannot revert it: the documents at version 1 or above (4) need that downgrade; build your own with pkg/command and version.WithFunc(\"restoreName\", ...) (see docs/lazy-upgrades.md), and run its down; nothing was changed"
	if down.Error() != want || !errors.Is(down, version.ErrFuncMissing) || exitCode(down) != ExitUsage {
		t.Errorf("down's refusal:\n got %v (exit %d)\nwant %s (exit 2)", down, exitCode(down), want)
	}
	before := notAppliedAdvice(&backfill.NotAppliedError{Collection: "orders", Target: 4, Applied: 3})
	want = "orders: migration 4, which raises its documents to version 4, is not applied yet (the database is at 3): run mongomig up (and roll out the application that knows it) before backfilling"
	if before.Error() != want || !errors.Is(before, backfill.ErrNotApplied) {
		t.Errorf("backfill before up:\n got %v\nwant %s", before, want)
	}
	during := &backfill.NotAppliedError{Collection: "orders", Target: 4, Applied: 3, During: true}
	if got := notAppliedAdvice(during); got != error(during) {
		t.Errorf("a target reverted during the run got advice: %v", got)
	}
	other := errors.New("other")
	if funcMissing(other, "down", "") != other || notAppliedAdvice(other) != other {
		t.Error("other errors are not passed unchanged")
	}
}

// TestBackfillRunningSaysWhatToDo: a down refused because a backfill of a
// collection it reverts holds its lease says how to go on, and exits 4 as
// a held lock.
func TestBackfillRunningSaysWhatToDo(t *testing.T) {
	err := backfillRunning(&runner.BackfillRunningError{Collection: "users", Lease: &lease.TimeoutError{Name: "backfill:users", Holder: lease.Info{Owner: "h-1"}}})
	if !strings.Contains(err.Error(), "let the backfill of users finish") || !strings.Contains(err.Error(), "--lock-wait") || exitCode(err) != ExitLock {
		t.Errorf("down during a backfill: %v (exit %d)", err, exitCode(err))
	}
}
