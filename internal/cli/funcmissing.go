package cli

import (
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// funcMissing words a *version.FuncMissingError for the command that met
// it: what the command cannot do without the func, and how to get a binary
// that has it. verb says what the command does to the documents ("check",
// "upgrade"); other errors pass unchanged. The result unwraps to err.
func funcMissing(err error, command, verb string) error {
	var fe *version.FuncMissingError
	if !errors.As(err, &fe) {
		return err
	}
	cannot, nothing := fmt.Sprintf("cannot %s the documents below version %d", verb, fe.Version), "read"
	if fe.Downgrade {
		cannot, nothing = fmt.Sprintf("cannot revert it: the documents at version %d or above (%d) need that downgrade", fe.Version, fe.Documents), "changed"
	}
	return &worded{err: err, msg: fmt.Sprintf("%v: %s: %s declares `func: %s`, which this mongomig binary does not have, so %s %s; build your own with pkg/command and version.WithFunc(%q, ...) (see docs/lazy-upgrades.md), and run its %s; nothing was %s",
		version.ErrFuncMissing, fe.Collection, fe.File, fe.Func, command, cannot, fe.Func, command, nothing)}
}

// backfillRunning adds to a down refused because a backfill of a
// collection it reverts is running what to do; other errors pass
// unchanged (exit 4, as a lock held).
func backfillRunning(err error) error {
	var br *runner.BackfillRunningError
	if !errors.As(err, &br) {
		return err
	}
	return &worded{err: err, msg: err.Error() + fmt.Sprintf("; let the backfill of %s finish (or stop it: it resumes later from its checkpoint), then run mongomig down again, or give down a longer --lock-wait to wait for it", br.Collection)}
}

// worded is a library error in the command line's words: msg says what to
// do, and errors.Is and errors.As still reach err.
type worded struct {
	err error
	msg string
}

func (w *worded) Error() string { return w.msg }
func (w *worded) Unwrap() error { return w.err }
