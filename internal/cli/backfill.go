package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/urfave/cli/v2"
)

func backfillCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "backfill",
		Usage: "upgrade the documents below the current version, resumably, in the background",
		Description: "Walks each collection in _id order and writes each upgrade as a delta of the fields it changes,\n" +
			"guarded on their old values on every server, so a concurrent application write is not overwritten\n" +
			"(on FerretDB v1 each guard costs a collection scan, and a warning says so); where the server has\n" +
			"pipeline updates, versions whose upgrade has a pipeline form are upgraded on the server, one atomic\n" +
			"update per _id range. Checkpointed: a killed or stopped backfill continues where it\n" +
			"stopped. Ctrl-C and --max-time stop at a batch boundary.\n" + exitHelp("backfill"),
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "collection", Usage: "backfill only collection `C` (repeatable)"},
			&cli.IntFlag{Name: "batch", Value: backfill.DefaultBatch, Usage: "documents per read and bulk write (at most 50 on FerretDB)"},
			&cli.Float64Flag{Name: "rate", Usage: "at most `DOCS_PER_S` documents per second over the run, on both paths (batches are capped to match)", DefaultText: "no cap"},
			&cli.DurationFlag{Name: "max-time", Usage: "stop at the first batch boundary after `D` (checkpoint saved)", DefaultText: "no limit"},
			&cli.BoolFlag{Name: "client-side", Usage: "never use the server-side fast path: read, upgrade in Go and write back every document"},
			&cli.BoolFlag{Name: "server-side", Usage: "use the server-side path even where it is off by default (FerretDB v1, where each range is a full collection read and cannot be guarded: needs --assume-no-writers)"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: fmt.Sprintf("upgrade each collection's _id ranges with `N` workers (at most %d) on the client path; other processes run with --workers > 1 share the ranges through range leases", backfill.MaxWorkers)},
			&cli.BoolFlag{Name: "assume-no-writers", Usage: "assume no application writes the collections while the backfill runs: write by _id alone, without guarding the old values (a concurrent application write would be overwritten)"},
			allowOldReleasesFlag("backfill"),
			&cli.BoolFlag{Name: "always-guard", Hidden: true, Usage: "retired: writes are guarded by default"},
		}, lockFlags()...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts, err := parseBackfillFlags(c)
			if err != nil {
				return err
			}
			return e.runBackfill(c.Context, opts)
		},
	}
}

// backfillOptions are backfill's parsed flags.
type backfillOptions struct {
	backfill backfill.Options
	lock     *lockOptions
}

func parseBackfillFlags(c *cli.Context) (backfillOptions, error) {
	if err := backfillFlagValues(c); err != nil {
		return backfillOptions{}, err
	}
	if c.Bool("client-side") && c.Bool("server-side") {
		return backfillOptions{}, usageError(fmt.Errorf("--client-side and --server-side contradict each other: pick one"))
	}
	if c.IsSet("always-guard") {
		return backfillOptions{}, usageError(fmt.Errorf("--always-guard is retired: backfill writes are guarded on the old values by default on every server, and the flag never changes the path; drop it (--assume-no-writers turns the guards off, only if no application writes the collection)"))
	}
	return backfillOptions{backfill: backfill.Options{
		Collections: c.StringSlice("collection"), Batch: c.Int("batch"),
		Rate: c.Float64("rate"), MaxTime: c.Duration("max-time"), ClientSide: c.Bool("client-side"),
		ServerSide: c.Bool("server-side"), AssumeNoWriters: c.Bool("assume-no-writers"),
		Workers: c.Int("workers"), IgnoreReleases: c.Bool(allowOldReleases),
	}, lock: parseLockFlags(c)}, nil
}

// backfillFlagValues refuses (exit 2) a --batch, --workers, --rate or
// --max-time value that cannot work, naming the flag.
func backfillFlagValues(c *cli.Context) error {
	switch {
	case c.Int("batch") <= 0:
		return usageError(fmt.Errorf("--batch %d: give a positive number of documents per batch (default %d)", c.Int("batch"), backfill.DefaultBatch))
	case c.Int("workers") <= 0:
		return usageError(fmt.Errorf("--workers %d: give a positive number of workers (default 1)", c.Int("workers")))
	case c.Int("workers") > backfill.MaxWorkers:
		// Each worker holds a range lease with its own heartbeat and a
		// pooled connection: past a few times the server's cores more
		// only contend (100,000 used 11 GB and lost their leases).
		return usageError(fmt.Errorf("--workers %d: at most %d (each worker holds a range lease and a connection; more only contend for the server)", c.Int("workers"), backfill.MaxWorkers))
	case c.Float64("rate") < 0:
		return usageError(fmt.Errorf("--rate %v: give a positive number of documents per second, or leave --rate out for no cap", c.Float64("rate")))
	case c.Duration("max-time") < 0:
		return usageError(fmt.Errorf("--max-time %v: give a positive duration such as 10m, or leave --max-time out for no limit", c.Duration("max-time")))
	}
	return nil
}

func (e *env) runBackfill(ctx context.Context, o backfillOptions) error {
	s, err := e.open(ctx, openOptions{lock: o.lock}, nil)
	if err != nil {
		return err
	}
	defer s.close()
	opts := o.backfill
	opts.Progress = true
	res, err := backfill.Run(ctx, s.runner, opts)
	e.endDownProgress()
	err = wordReleases(err, "backfill")
	err = wordDiscard(unguardedAdvice(notAppliedAdvice(funcMissing(err, "backfill", "upgrade"))))
	if res != nil && e.out.json && err != nil {
		// One object on stdout: the failure, carrying the result so far.
		return &resultError{err: err, result: res}
	}
	if res != nil {
		if e.out.json {
			if jerr := e.out.writeJSON(res); jerr != nil {
				return jerr
			}
		} else {
			e.renderBackfill(res)
		}
		if err == nil && res.Stopped == "interrupted" {
			// As every command stopped by a signal: 130, failures or not.
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("backfill stopped by a signal at a safe point; run backfill again to continue"), reported: e.out.json}
		}
		if err == nil && res.FailuresRemain() {
			return &exitError{code: ExitFailure, err: fmt.Errorf("documents that could not be upgraded remain (listed above); fix them or their upgrade, then run backfill again"), reported: e.out.json}
		}
	}
	return err
}

func (e *env) renderBackfill(res *backfill.Result) {
	o := e.out
	for i, c := range res.Collections {
		state := o.yellow("stopped")
		switch {
		case c.Proven:
			state = o.green("done")
		case c.Complete:
			state = o.yellow("walked")
		}
		resumed := ""
		if c.Resumed {
			resumed = " (resumed)"
		}
		server := ""
		if c.ServerSide > 0 {
			server = fmt.Sprintf(" (%d on the server, no document sent)", c.ServerSide)
		}
		o.printf("%s %s: %s upgraded to version %d%s%s, %d in all; %s, %s\n",
			state, c.Collection, count(c.Upgraded, "document"), c.Target, server, resumed, c.TotalUpgraded, count(c.Batches, "batch"), count(c.RoundTrips, "round trip"))
		if c.ServerSideNote != "" {
			o.printf("  %s\n", c.ServerSideNote)
		}
		if c.Ranges > 0 {
			o.printf("  %s shared by the workers; split points: %s\n", count(c.Ranges, "_id range"), c.RangeSplit)
		}
		if c.RangesNote != "" {
			o.printf("  %s\n", c.RangesNote)
		}
		if c.Conflicts > 0 {
			o.printf("  %s changed under the backfill twice and were left to the application's lazy upgrade\n", count(c.Conflicts, "document"))
		}
		for _, f := range c.Failed {
			more := ""
			if n := f.Count - int64(len(f.ExampleIDs)); n > 0 {
				more = fmt.Sprintf(" (and %d more)", n)
			}
			o.printf("  %s %s cannot be upgraded: %s\n       %s %s%s\n", o.red("FAIL"), count(f.Count, "document"), f.Message, o.faint("e.g."), strings.Join(f.ExampleIDs, ", "), more)
		}
		switch {
		case c.Complete && !c.Proven && res.Stopped != "" && i == len(res.Collections)-1:
			o.printf("  walked to the end; stopped before checking that no document below version %d remains\n", c.Target)
		case c.Complete && !c.Proven:
			o.printf("  documents below version %d remain (failures, or written meanwhile by an older application): run backfill again\n", c.Target)
		}
	}
	switch res.Stopped {
	case "deadline":
		o.printf("stopped at --max-time at a safe point (checkpoint saved); run backfill again to continue\n")
	case "interrupted":
		o.printf("stopped by a signal at a safe point (checkpoint saved); run backfill again to continue\n")
	}
}

// renderBackfillBatch renders a backfill's progress after a batch, with
// its rate and the time left.
func (e *env) renderBackfillBatch(p events.BackfillBatch) {
	rate := float64(p.Upgraded) / max(p.Elapsed.Seconds(), 0.001)
	line := fmt.Sprintf("%s: %d upgraded to version %d (%d in all), %.0f docs/s", p.Collection, p.Upgraded, p.Target, p.Total, rate)
	if p.Remaining >= 0 && rate > 0 {
		eta := time.Duration(float64(p.Remaining) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf(", %d left, ETA %s", p.Remaining, eta)
	}
	e.renderDownProgress(line)
}

// notAppliedAdvice adds to a backfill refused for a target not applied
// what to run.
func notAppliedAdvice(err error) error {
	var na *backfill.NotAppliedError
	if !errors.As(err, &na) || na.During {
		return err
	}
	return &worded{err: err, msg: fmt.Sprintf("%s: migration %d, which raises its documents to version %d, is not applied yet (the database is at %d): run mongomig up (and roll out the application that knows it) before backfilling",
		na.Collection, na.Target, na.Target, na.Applied)}
}

// unguardedAdvice words a --server-side refused where it cannot be
// guarded.
func unguardedAdvice(err error) error {
	var ue *backfill.UnguardedServerSideError
	if !errors.As(err, &ue) {
		return err
	}
	return usageError(&worded{err: err, msg: fmt.Sprintf("--server-side cannot be guarded against application writes here: %s, so its updates read the documents and write them apart; add --assume-no-writers only if no application writes the collection while the backfill runs, or drop --server-side for the client path's guarded writes", ue.Reason)})
}
