package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/runner"
)

func downCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "down",
		Usage: "revert the last migration, or every migration above --to N",
		Description: "Validators and indexes go back to what the earlier migrations declare. Documents at a reverted\n" +
			"version are downgraded only where the file declares `downgrade:`; otherwise down refuses before\n" +
			"changing anything. --dry-run prints the plan.\n" +
			"SIGINT or SIGTERM stops it between two commands or two batches of document writes and releases the\n" +
			"lock; the message says which documents are already downgraded; run down again to continue.\n" +
			"Exit codes: 0 reverted, 1 failed, 2 invalid files or flags or nothing to revert, 3 drift, a missing\n" +
			"file, or documents it cannot revert (no downgrade: declared, or partway through a backfill),\n" +
			"4 lock not acquired, 130 interrupted.",
		Flags: append([]cli.Flag{
			&cli.Int64Flag{Name: "to", Usage: "revert every migration above version `N` (0: all)", DefaultText: "the last applied migration only"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and change nothing"},
			&cli.BoolFlag{Name: "allow-drift", Usage: "revert even though applied files were edited"},
		}, lockFlags()...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return backfillRunning(funcMissing(e.runDown(c.Context, parseDownFlags(c)), "down", ""))
		},
	}
}

// downOptions are down's parsed flags.
type downOptions struct {
	// to is --to (toSet: given, and checked once the files are read);
	// without it, the last applied migration only.
	to    int64
	toSet bool
	// dryRun is --dry-run.
	dryRun bool
	// open: the lock flags and --allow-drift.
	open openOptions
}

func parseDownFlags(c *cli.Context) downOptions {
	return downOptions{to: c.Int64("to"), toSet: c.IsSet("to"), dryRun: c.Bool("dry-run"),
		open: openOptions{lock: parseLockFlags(c), allowDrift: c.Bool("allow-drift")}}
}

func (e *env) runDown(ctx context.Context, o downOptions) error {
	s, err := e.open(ctx, o.open, nil)
	if err != nil {
		return err
	}
	defer s.close()
	to := int64(-1)
	if o.toSet {
		if to = o.to; to < 0 {
			return usageError(fmt.Errorf("--to %d: versions are 0 or more", to))
		}
	}
	if o.dryRun {
		if to < 0 {
			st, err := s.runner.LedgerStatus(ctx)
			if err != nil {
				return err
			}
			to = previousApplied(st)
		}
		p, err := s.runner.PlanDown(ctx, to)
		if err != nil {
			return err
		}
		return e.renderPlan(p, s.runner.Migrations())
	}
	var reverted []runner.Applied
	if to < 0 {
		reverted, err = s.runner.Down(ctx)
	} else {
		reverted, err = s.runner.DownTo(ctx, to)
		err = rerunTo(err, "down", to)
	}
	e.endDownProgress()
	if errors.Is(err, runner.ErrNothingToRevert) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	st, err := s.runner.LedgerStatus(ctx)
	if err != nil {
		return err
	}
	if e.out.json {
		return e.out.writeJSON(upResult{Applied: reverted, Current: st.Current})
	}
	for _, a := range reverted {
		e.out.printf("%s %s\n", e.out.green("reverted"), a.File)
		for _, d := range a.Documents {
			e.out.printf("  %s: %s downgraded from version %d to %d\n", d.Collection, count(d.Count, "document"), d.From, d.To)
		}
		for _, r := range a.Run {
			e.out.printf("  run %d: %s\n", r.Index+1, display(r.Summary))
		}
		warnUnrestorable(e.out, a.Unrestorable)
		for _, l := range a.NotReverted {
			e.out.warnf("not reverted: %s", display(l))
		}
		for _, r := range a.Run {
			if r.Unrestorable != "" {
				e.out.warnf("%s", display(r.Unrestorable))
			}
		}
	}
	e.out.printf("the database is at version %d\n", st.Current)
	return nil
}

// previousApplied is the applied version below the current one (0: none).
func previousApplied(st *runner.Status) int64 {
	prev := int64(0)
	for _, m := range st.Migrations {
		if m.State != runner.StatePending && m.Version < st.Current {
			prev = max(prev, m.Version)
		}
	}
	return prev
}

// downProgress is the state of down's progress line on stderr.
type downProgress struct {
	shown   bool      // a line is on the terminal, not ended
	lastLog time.Time // when stderr last got a line
}

// renderDownProgress renders a progress line (an events.DowngradeProgress,
// an events.BackfillBatch): rewritten in place on a terminal, otherwise a
// log line when 5 s passed since the last line.
func (e *env) renderDownProgress(line string) {
	p := &e.downProgress
	switch {
	case e.streams.ErrIsTerminal:
		fmt.Fprintf(e.out.err, "\r\033[K%s", line)
		p.shown = true
	case time.Since(p.lastLog) >= 5*time.Second:
		e.logf("%s", line)
		p.lastLog = time.Now()
	}
}

// endDownProgress clears the progress line, before any other output.
func (e *env) endDownProgress() {
	p := &e.downProgress
	if p.shown {
		fmt.Fprint(e.out.err, "\r\033[K")
		p.shown = false
	}
	p.lastLog = time.Now()
}
