package cli

import (
	"errors"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// Exit codes, as docs/cli.md documents them.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the operation failed
	ExitUsage   = 2 // bad flags or arguments, or invalid migration files
	ExitCheck   = 3 // pending or drifted migrations, or documents that would fail
	ExitLock    = 4 // the lock was not acquired in time
	// ExitInternal: a command panicked, a bug in mongomig or in a func
	// step's Go function (EX_SOFTWARE of sysexits.h).
	ExitInternal = 70
	// ExitInterrupted: SIGINT, SIGTERM or SIGHUP stopped the command at a
	// safe point (128 + SIGINT, as shells report Ctrl-C).
	ExitInterrupted = 130
)

// ErrEmbeddedInUse is wrapped by a Config.Embedded function when another
// process serves the sandbox directory: like a lock not acquired, exit 4.
var ErrEmbeddedInUse = errors.New("embedded sandbox directory in use")

// exitError carries an exit code. reported means the command already
// rendered the problem, so Main prints nothing more.
type exitError struct {
	code     int
	err      error
	reported bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return "exit status " + string(rune('0'+e.code))
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError reports bad command-line input (exit 2).
func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

// silentExit ends with code after the command rendered its own output.
func silentExit(code int) error { return &exitError{code: code, reported: true} }

// exitCode maps an error to the process exit code: the one place that does.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var intr *runner.InterruptedError
	if errors.As(err, &intr) {
		return ExitInterrupted
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return ExitInternal
	}
	if errors.Is(err, ErrEmbeddedInUse) {
		return ExitLock
	}
	var (
		lockErr *runner.LockTimeoutError
		drift   *runner.DriftError
		order   *runner.OrderError
		down    *runner.DowngradeError
		discard *backfill.DiscardError
		inLine  *integrity.OutOfLineError
	)
	switch {
	case errors.As(err, &lockErr), errors.As(err, new(*release.BehindError)):
		// A live older release holds the collection as a lease would.
		return ExitLock
	case errors.As(err, &drift), errors.As(err, &down), errors.As(err, &discard), errors.Is(err, runner.ErrPartway), errors.As(err, &inLine):
		// The stored documents or files do not allow the run; nothing changed.
		return ExitCheck
	case errors.As(err, &order), errors.As(err, new(*integrity.ChangeStreamsError)):
		// A follower on a server without change streams: nothing ran.
		return ExitUsage
	case errors.Is(err, version.ErrUnknownCollection), errors.Is(err, version.ErrFuncMissing):
		// Every product's unknown collection is version's sentinel.
		return ExitUsage
	}
	var list migration.ErrorList
	if errors.As(err, &list) {
		return ExitUsage
	}
	var invalid *runner.InvalidFilesError
	var unenforceable *runner.UnenforceableError
	var lifecycle *runner.LifecycleRefusedError
	var unsupported *runner.UnsupportedSettingError
	if errors.As(err, &invalid) || errors.As(err, &unenforceable) || errors.As(err, &lifecycle) || errors.As(err, &unsupported) {
		return ExitUsage
	}
	return ExitFailure
}

// alreadyReported tells Main not to print err again.
func alreadyReported(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.reported
}
