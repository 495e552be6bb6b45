package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/report"
	"github.com/mongomig/mongomig/pkg/runner"
)

func upCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "up",
		Usage: "apply pending migrations in order, exactly once even when several processes run it at once",
		Description: "Takes the migration lock (waiting up to --lock-wait for another process), applies each pending\n" +
			"migration's validators and indexes, and records it in the ledger only after all of it succeeded.\n" +
			"A validator using a $jsonSchema keyword the server does not enforce (probed in a scratch database) is\n" +
			"refused before anything is sent, unless --client-side-validator names its collection.\n" +
			"--dry-run prints the plan (the exact commands) and the validation report, and changes nothing.\n" +
			"SIGINT or SIGTERM stops it between two commands and releases the lock; run up again to continue.\n" +
			"Exit codes: 0 applied or nothing pending, 1 failed, 2 invalid files or flags (a step that discards\n" +
			"stored data without `discard: true` among them), or a validator the server\n" +
			"cannot enforce (with --dry-run, also an upgrade's func step this binary does not register), 3 drift (or, with --dry-run, documents or\n" +
			"index builds that would fail), 4 lock not acquired, 130 interrupted.",
		Flags: append(append([]cli.Flag{
			&cli.Int64Flag{Name: "to", Usage: "apply up to and including version `N` (0: nothing)", DefaultText: "every pending migration"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and the validation report, and change nothing"},
			&cli.BoolFlag{Name: "allow-drift", Usage: "apply even though applied files were edited"},
			clientSideValidatorFlag(),
			allowOldReleasesFlag("close validator windows"),
		}, lockFlags()...), append(reportFlags(), allIDsFlag(), showValuesFlag())...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts, err := parseUpFlags(c, e.g.JSON)
			if err != nil {
				return err
			}
			return e.runUp(c.Context, opts)
		},
	}
}

// upOptions are up's parsed flags.
type upOptions struct {
	// to is --to (toSet: given); without it, every pending migration.
	to    int64
	toSet bool
	// dryRun is --dry-run; report its report flags, checked only then.
	dryRun bool
	report reportSettings
	// open: the lock flags, --allow-drift and --client-side-validator.
	open openOptions
}

func parseUpFlags(c *cli.Context, jsonFlag bool) (upOptions, error) {
	if c.Int64("to") < 0 {
		return upOptions{}, usageError(fmt.Errorf("--to %d: versions are 0 or more", c.Int64("to")))
	}
	return upOptions{
		to: c.Int64("to"), toSet: c.IsSet("to"), dryRun: c.Bool("dry-run"), report: readReportFlags(c, jsonFlag),
		open: openOptions{lock: parseLockFlags(c), allowDrift: c.Bool("allow-drift"), clientSideValidators: c.StringSlice(clientSideFlag), allowOldReleases: c.Bool(allowOldReleases)},
	}, nil
}

// upResult is up's --json output.
type upResult struct {
	Applied   []runner.Applied   `json:"applied"`
	Tightened *runner.Tightening `json:"tightened,omitempty"`
	Buckets   *runner.BucketRun  `json:"buckets,omitempty"`
	Current   int64              `json:"current"`
	// Reasserted: what up put back first (runner.UpResult).
	Reasserted *runner.Reasserted `json:"reasserted,omitempty"`
}

func (e *env) runUp(ctx context.Context, o upOptions) error {
	s, err := e.open(ctx, o.open, nil)
	if err != nil {
		return err
	}
	defer s.close()
	if err := checkClientSideFlag(o.open.clientSideValidators, s.runner.Migrations()); err != nil {
		return err
	}
	to := runner.Latest
	if o.toSet {
		to = o.to
		if ms := s.runner.Migrations(); len(ms) > 0 && to > ms[len(ms)-1].Version {
			return usageError(fmt.Errorf("--to %d: no migration goes that far (the last file is %s); omit --to to apply every pending migration", to, ms[len(ms)-1].File))
		}
	}
	if o.dryRun {
		if err := o.report.check(); err != nil {
			return err
		}
		return wordUnenforceable(e.dryRun(ctx, s, to, o.report), "up --dry-run")
	}
	if err := e.warnNewCollections(ctx, s.runner, to, false); err != nil {
		return err
	}
	res, err := s.runner.UpTo(ctx, to)
	applied := res.Applied
	err = wordUnenforceable(err, "up")
	if o.toSet {
		err = rerunTo(err, "up", to)
	}
	if err != nil {
		if len(applied) > 0 {
			e.out.warnf("applied before the %s: %s", stoppedBy(ctx, err), files(applied))
		}
		return err
	}
	st, err := s.runner.LedgerStatus(ctx)
	if err != nil {
		return err
	}
	if e.out.json {
		return e.out.writeJSON(upResult{Applied: applied, Tightened: res.Tightened, Buckets: res.Buckets, Current: st.Current, Reasserted: res.Reasserted})
	}
	e.renderReasserted(res.Reasserted)
	e.renderBuckets(res.Buckets, false) // buckets.go
	if len(applied) == 0 && res.Tightened == nil {
		e.out.printf("nothing to apply: the database is at version %d\n", st.Current)
		return nil
	}
	var clientSide, asked, readBack []string
	notes := func(cmds []runner.CommandResult) {
		for _, r := range cmds {
			if r.Outcome == runner.OutcomeOK && r.Note != "" && r.Name != runner.CommandDeleteExpired {
				readBack = append(readBack, r.Collection+": "+r.Note)
			}
			if r.Asked {
				asked = append(asked, r.Collection)
			}
		}
	}
	for _, a := range applied {
		notes(a.Commands)
		e.out.printf("%s %s\n", e.out.green("applied"), a.File)
		for _, r := range a.Commands {
			if r.Name == runner.CommandDeleteExpired {
				e.out.printf("  %s: %s\n", display(r.Collection), display(r.Note))
			}
		}
		for _, r := range a.Run {
			e.out.printf("  run %d: %s\n", r.Index+1, display(r.Summary))
		}
		clientSide = append(clientSide, a.ClientSideValidators...)
	}
	if t := res.Tightened; t != nil {
		notes(t.Commands)
		for _, c := range t.Commands {
			if step := raiseStep(c.Command); step != "" { // constraint.go
				e.out.printf("%s: %s\n", e.out.green("sent"), step)
				continue
			}
			e.out.printf("%s the validator window of %s (a backfill proved no older document remains)\n", e.out.green("closed"), c.Collection)
		}
		clientSide = append(clientSide, t.ClientSideValidators...)
		e.renderHeld(t.Held)
	}
	e.out.printf("the database is at version %d\n", st.Current)
	for _, n := range readBack {
		e.out.warnf("%s", n)
	}
	e.warnClientSide(uniq(clientSide), asked)
	return nil
}

// dryRunResult is `up --dry-run --json`.
type dryRunResult struct {
	Plan   *runner.Plan   `json:"plan"`
	Report *report.Report `json:"report"`
}

// dryRun prints the plan and the validation report of the validators the
// pending migrations change; exit 3 when documents would be rejected.
func (e *env) dryRun(ctx context.Context, s *session, to int64, rs reportSettings) error {
	p, err := s.runner.Plan(ctx, to)
	if err != nil {
		return err
	}
	if err := refusePlanMissingFuncs(s.runner, p); err != nil {
		return err
	}
	if err := e.warnNewCollections(ctx, s.runner, to, true); err != nil {
		return err
	}
	pending, err := s.runner.Pending(ctx, to)
	if err != nil {
		return err
	}
	rp, err := e.reporter(s)
	if err != nil {
		return err
	}
	rep, err := rp.DryRun(ctx, pending, rs.options(e.progress()))
	if err != nil {
		return err
	}
	refused := lint.Discarding(s.runner.Migrations(), pending)
	switch {
	case rs.format == "json" && rs.out == "":
		if err := e.out.writeJSON(dryRunResult{Plan: p, Report: rep}); err != nil {
			return err
		}
	case rs.out != "" || rs.format != "text":
		if rs.out != "" {
			if err := e.renderPlan(p, s.runner.Migrations()); err != nil {
				return err
			}
		}
		if err := e.writeReport(rep, rs); err != nil {
			return err
		}
	default:
		if err := e.renderPlan(p, s.runner.Migrations()); err != nil {
			return err
		}
		switch {
		case len(rep.Collections) > 0:
			e.out.printf("\n")
			renderReportText(e.out, rep)
		case len(rep.IndexBuilds) > 0:
			// No validator changes, but the index predictions may be
			// why the dry run exits 3: they must be shown.
			renderIndexBuilds(e.out, rep.IndexBuilds)
		}
		renderDiscards(e.out, rep.Discards, refused)
		if err := e.dryRunBuckets(ctx, s, to); err != nil { // buckets.go
			return err
		}
	}
	if err := refuseDiscards(refused); err != nil {
		return err
	}
	if rep.WouldReject {
		return silentExit(ExitCheck)
	}
	return nil
}

// rerunTo makes the message of an interrupted `verb --to N` say to run
// it again with --to N: the bare command goes further.
func rerunTo(err error, verb string, to int64) error {
	var ie *runner.InterruptedError
	if errors.As(err, &ie) {
		return &rerunError{err: err, rerun: fmt.Sprintf("mongomig %s --to %d", verb, to)}
	}
	return err
}

// rerunError is an interrupted run whose advice names the command to run
// again (advice.go): one with a target.
type rerunError struct {
	err   error
	rerun string
}

func (e *rerunError) Error() string { return e.err.Error() }
func (e *rerunError) Unwrap() error { return e.err }

// refusePlanMissingFuncs refuses a dry run whose report would upgrade
// documents through a func step this binary lacks (see version.Registry.CheckFuncs).
func refusePlanMissingFuncs(r *runner.Runner, p *runner.Plan) error {
	if len(p.Migrations) == 0 {
		return nil
	}
	planned := map[int64]bool{}
	var last int64
	for _, m := range p.Migrations {
		planned[m.Version] = true
		last = max(last, m.Version)
	}
	var pending []*migration.Migration
	for _, m := range r.Migrations() {
		if planned[m.Version] {
			pending = append(pending, m)
		}
	}
	return funcMissing(r.Registry().CheckFuncs(reportedCollections(pending, true), last), "up --dry-run", "check")
}

// noCommands words a planned migration that sends no command by what it
// does instead in the plan's direction: its document upgrades (up) or
// downgrades (down); a migration declaring only downgrade steps does
// nothing on up, one declaring only examples nothing either way.
func noCommands(migs []*migration.Migration, version int64, direction string) string {
	var upgrades, downgrades bool
	for _, m := range migs {
		if m.Version != version {
			continue
		}
		for _, c := range m.Collections {
			upgrades = upgrades || len(c.Upgrade) > 0
			downgrades = downgrades || len(c.Downgrade) > 0
		}
	}
	switch {
	case direction == "down" && downgrades:
		return "(no commands: document downgrades only)"
	case direction == "down":
		return "(no commands)"
	case upgrades:
		return "(no commands: document upgrades only)"
	case downgrades:
		return "(no commands: downgrade steps only)"
	}
	return "(no commands)"
}

func files(applied []runner.Applied) string {
	var s []string
	for _, a := range applied {
		s = append(s, a.File)
	}
	return strings.Join(s, ", ")
}

func uniq(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// renderPlan prints a dry run: per migration, the exact commands (migs
// are the files, to say what a migration without commands does).
func (e *env) renderPlan(p *runner.Plan, migs []*migration.Migration) error {
	o := e.out
	if o.json {
		return o.writeJSON(p)
	}
	verb := "apply"
	if p.Direction == "down" {
		verb = "revert"
	}
	e.renderReassertPlan(p.Reassert)
	if len(p.Migrations) == 0 {
		o.printf("nothing to %s: the database is at version %d\n", verb, p.Current)
		e.renderHeldPlan(p.HeldWindows)
		for _, c := range p.Tighten {
			if step := raiseStep(c); step != "" { // constraint.go
				o.printf("would %s:\n  %s\n", step, display(string(c.Text)))
				continue
			}
			o.printf("would close the validator window of %s (a backfill proved no older document remains):\n  %s\n", display(c.Collection), display(string(c.Text)))
		}
		return nil
	}
	o.printf("%s (dry run, nothing changed): the database is at version %d; would %s %s\n",
		o.bold("plan"), p.Current, verb, count(len(p.Migrations), "migration"))
	for _, m := range p.Migrations {
		o.printf("\n%s %s\n", o.bold(fmt.Sprintf("%04d", m.Version)), migration.DisplayName(m.File))
		if len(m.Commands) == 0 && len(m.Run) == 0 {
			o.printf("  %s\n", noCommands(migs, m.Version, string(p.Direction)))
		}
		for _, c := range m.Commands {
			o.printf("  %s\n", display(string(c.Text)))
			if c.Cost != "" {
				o.printf("    %s\n", o.faint(display(c.Cost)))
			}
		}
		for _, s := range p.Settings {
			if s.Version == m.Version {
				o.printf("  %s\n", o.faint("effective "+display(settingsLine(s))))
			}
		}
		printRunPlan(o, m.Run)
	}
	for _, n := range p.Notes {
		o.printf("\n%s %s\n", o.yellow("note:"), display(n))
	}
	return nil
}
