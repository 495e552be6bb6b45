package cli

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/urfave/cli/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/runner"
)

// lockFlags are the lock options of commands that take the lock.
func lockFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "lock-wait", Value: runner.DefaultLockWait, Usage: "how long to wait for a lock another process holds before exiting 4", EnvVars: []string{"MONGOMIG_LOCK_WAIT"}},
		&cli.DurationFlag{Name: "lock-lease", Value: runner.DefaultLockLease, Usage: "lease of the lock; a crashed process's lock is taken over after it", EnvVars: []string{"MONGOMIG_LOCK_LEASE"}},
	}
}

// session is an open database with a runner for the migration directory.
type session struct {
	db     *mongo.Database
	runner *runner.Runner
	close  func()
}

// lockOptions are the parsed --lock-wait and --lock-lease.
type lockOptions struct {
	wait, lease time.Duration
}

// parseLockFlags reads the lock flags of a command that has them
// (lockFlags): their value, environment variable or default.
func parseLockFlags(c *cli.Context) *lockOptions {
	return &lockOptions{wait: c.Duration("lock-wait"), lease: c.Duration("lock-lease")}
}

// openOptions are what a command's flags change in the runner it opens.
type openOptions struct {
	// lock: nil keeps the runner's default wait and lease (commands
	// without lock flags).
	lock *lockOptions
	// allowDrift is --allow-drift (up and down).
	allowDrift bool
	// clientSideValidators is up's --client-side-validator.
	clientSideValidators []string
	// allowOldReleases is up's --allow-old-releases (releases.go).
	allowOldReleases bool
}

// runnerOptions are the runner options o asks for.
func (o openOptions) runnerOptions() []runner.Option {
	var opts []runner.Option
	if o.lock != nil {
		opts = append(opts, runner.WithLockWait(o.lock.wait), runner.WithLockLease(o.lock.lease))
	}
	if o.allowDrift {
		opts = append(opts, runner.WithAllowDrift(true))
	}
	if o.allowOldReleases {
		opts = append(opts, runner.WithAllowOldReleases(true))
	}
	if len(o.clientSideValidators) > 0 {
		opts = append(opts, runner.WithClientSideValidators(o.clientSideValidators...))
	}
	return opts
}

// open connects and builds a runner for --dir; fsys overrides --dir when
// not nil (demo uses the embedded samples).
func (e *env) open(ctx context.Context, oo openOptions, fsys fs.FS) (*session, error) {
	if fsys == nil {
		var err error
		if fsys, err = migrationDir(e.g); err != nil {
			return nil, err
		}
	}
	// Invalid files are refused before anything connects (or creates a
	// sandbox directory, or takes a lock): runner.New would refuse them
	// the same way, after connecting.
	rep, err := lint.Lint(fsys, e.cfg.VersionOptions...)
	if err != nil {
		return nil, err
	}
	if !rep.OK() {
		return nil, &runner.InvalidFilesError{Report: rep}
	}
	db, closeDB, err := e.connect(ctx)
	if err != nil {
		return nil, err
	}
	opts := []runner.Option{runner.WithToolVersion(toolVersion()), runner.WithLogger(events.LoggerFunc(e.renderEvent)), runner.WithVersionOptions(e.cfg.VersionOptions...)}
	r, err := runner.New(db, fsys, append(opts, oo.runnerOptions()...)...)
	if err != nil {
		closeDB()
		return nil, err
	}
	return &session{db: db, runner: r, close: closeDB}, nil
}

func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// renderEvent writes what the libraries log to stderr; the
// client-side-only warning is given once per run.
func (e *env) renderEvent(ev events.Entry) {
	switch ev := ev.(type) {
	case events.DowngradeProgress:
		e.renderDownProgress(ev.String())
		return
	case events.BackfillBatch:
		e.renderBackfillBatch(ev)
		return
	}
	e.endDownProgress()
	e.noteTimeFence(ev)
	switch ev := ev.(type) {
	case events.ValidatorClientSide:
		if e.warnedClientSide {
			return
		}
		e.warnedClientSide = true
		e.out.warnf("%s; further collections are reported in the result", ev)
	case events.LedgerFenceOnly:
		// Said before the first ledger write, not on an up or down that
		// writes nothing (nothing to apply, refused).
		e.timeFenceHeld = !e.notedTimeFence
	case events.DriftAccepted:
		e.logf("  %s: edit accepted (--allow-drift); recorded in the ledger", ev.File)
	case events.BackfillUnguarded:
		e.out.warnf("%s", ev.Message(" (--assume-no-writers)"))
	case events.BackfillGuardScans:
		e.out.warnf("%s", ev.Message("--assume-no-writers writes by _id alone"))
	case events.DownGuardScans, events.BackfillSlowIDs, events.StateDiffers, events.StateUnchecked, events.WindowReopened:
		e.out.warnf("%s", ev)
	case events.StateChecking, events.StateReasserted, events.StateMatches:
		e.logf("%s", ev)
	case events.RangeLeaseLost:
		e.logf("%s", adviseIn(ev.String(), ev.Err))
	case events.MigrationStarted, events.MigrationDone, events.LockWaiting, events.LockTakenOver, events.DocumentsDowngraded, events.BackfillDiscards:
		e.logf("%s", ev)
	case events.CommandSent, events.CommandSkipped, events.WindowClosed:
		e.logf("  %s", ev)
	}
}

func (e *env) logf(format string, a ...any) {
	fmt.Fprintf(e.out.err, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}
