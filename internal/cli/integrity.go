package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/integrity"
)

func integrityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "collection", Usage: "only the rules declared on collection `C` (repeatable)"},
		&cli.IntFlag{Name: "batch-size", Value: 500, Usage: "documents a client-side join holds at once"},
		&cli.BoolFlag{Name: "client-side", Usage: "join on the client even where the server has $lookup and $group"},
	}
}

func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "list the documents out of line with the declared references, copies, aggregates and counters",
		Description: "Reads every document the integrity rules of the migration files cover and lists each value out\n" +
			"of line: _id, rule, stored and expected value, and the counts per rule (docs/integrity.md).\n" + exitHelp("check"),
		Flags: append(append(integrityFlags(),
			&cli.BoolFlag{Name: "all", Usage: "list every value out of line, not only the first 1000 (the counts are always complete)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "report format: text, json, markdown or junit"},
			&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "resume", Usage: "store the check's progress in mongomig_backfill and go on from a stopped check's"}),
			lockFlags()...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			rs := readReportFlags(c, e.g.JSON)
			if err := rs.check(); err != nil {
				return err
			}
			opts := integrityOptions(c)
			if c.Bool("all") {
				opts.MaxFindings = -1
			}
			if opts.Resumable = c.Bool("resume"); opts.Resumable && c.Bool("all") {
				return usageError(fmt.Errorf("--resume with --all: a resumable check stores the values it lists, at most the first 1000: drop --all (the counts stay complete), or --resume to list every value"))
			}
			return e.runCheck(c.Context, opts, rs, parseLockFlags(c))
		},
	}
}

func repairCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "repair",
		Usage: "fix what check finds: mirrors, aggregates, counters and the references declared unset or delete",
		Description: "Checks every rule and writes each fix guarded on the value it saw: a concurrent write is never\n" +
			"erased (the document is re-checked instead). A snapshot copy and a reference declared report are\n" +
			"never written. Lists {rule, _id, wrong, right} per fix (docs/integrity.md). --follow keeps running\n" +
			"on a server with change streams: each change to a collection the rules read is applied as it\n" +
			"happens, resuming from the stored token (a full check and repair first when none is stored or\n" +
			"its history is lost).\n" + exitHelp("repair"),
		Flags: append(append(integrityFlags(), &cli.BoolFlag{Name: "dry-run", Usage: "list the fixes without writing"},
			&cli.Float64Flag{Name: "rate", Usage: "at most `FIXES_PER_S` writes per second from this process (0: unbounded)"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "walk `N` _id ranges of a pass (a collection's rules) at once, 1 to 32 (other repair processes take the other ranges)"},
			&cli.BoolFlag{Name: "all", Usage: "list every fix, not only the first 1000 (the counts are always complete)"},
			&cli.BoolFlag{Name: "progress", Usage: "print each rule's count to stderr as it finishes"},
			&cli.BoolFlag{Name: "follow", Usage: "keep running: apply the changes to the collections the rules read as they happen (needs change streams; docs/integrity.md#following-changes)"},
			&cli.BoolFlag{Name: "pre-images", Usage: "with --follow: ask each change's pre-image (MongoDB 6.0+, changeStreamPreAndPostImages on the aggregates' child collections)"}),
			lockFlags()...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts := integrityOptions(c)
			if opts.Rate = c.Float64("rate"); opts.Rate < 0 {
				return usageError(fmt.Errorf("--rate %v: give a positive number of writes per second, or 0 for no bound", opts.Rate))
			}
			if opts.Workers = c.Int("workers"); opts.Workers < 1 || opts.Workers > maxRepairWorkers {
				return usageError(fmt.Errorf("--workers %d: give 1 to %d", opts.Workers, maxRepairWorkers))
			}
			if c.Bool("all") {
				opts.MaxFindings = -1
			}
			if c.Bool("follow") {
				if c.Bool("dry-run") {
					return usageError(errors.New("--follow writes as changes happen: it cannot be a --dry-run"))
				}
				return e.runFollow(c.Context, opts, parseLockFlags(c), c.Bool("pre-images"))
			}
			if c.Bool("pre-images") {
				return usageError(errors.New("--pre-images is --follow's: give --follow too"))
			}
			return e.runRepair(c.Context, opts, parseLockFlags(c), c.Bool("dry-run"), c.Bool("progress"))
		},
	}
}

// maxRepairWorkers bounds --workers: each worker holds a range lease and
// a connection.
const maxRepairWorkers = 32

func integrityOptions(c *cli.Context) integrity.Options {
	return integrity.Options{Collections: c.StringSlice("collection"), BatchSize: c.Int("batch-size"), ClientOnly: c.Bool("client-side")}
}

func (e *env) checker(ctx context.Context, opts integrity.Options, oo openOptions, leases bool) (*integrity.Checker, *session, error) {
	if opts.BatchSize < 1 {
		return nil, nil, usageError(fmt.Errorf("--batch-size %d: give a positive number of documents", opts.BatchSize))
	}
	s, err := e.open(ctx, oo, nil)
	if err != nil {
		return nil, nil, err
	}
	if leases {
		opts.Leases, opts.LeaseWait = s.runner, s.runner.LockWait()
	}
	c, err := integrity.New(s.db, s.runner.Migrations(), opts)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return c, s, nil
}

func (e *env) runCheck(ctx context.Context, opts integrity.Options, rs reportSettings, lock *lockOptions) error {
	// --resume: the runner is the lease acquirer (--lock-wait,
	// --lock-lease): two resumable checks of one database never run at
	// once.
	c, s, err := e.checker(ctx, opts, openOptions{lock: lock}, opts.Resumable)
	if err != nil {
		return err
	}
	defer s.close()
	rep, err := c.Check(ctx)
	if err != nil {
		return err
	}
	render := func(w io.Writer, color bool) error { return renderCheck(w, color, rep, rs.format) }
	if rs.out == "" {
		err = render(e.out.out, e.out.color)
	} else if err = writeFileAtomic(rs.out, func(w io.Writer) error { return render(w, false) }); err != nil {
		err = fmt.Errorf("--out %s: %w", rs.out, err)
	} else {
		fmt.Fprintf(e.out.err, "report written to %s\n", rs.out)
	}
	if err != nil {
		return err
	}
	if rep.Err() != nil {
		return &exitError{code: exitCode(rep.Err()), err: rep.Err(), reported: true}
	}
	return nil
}

func (e *env) runRepair(ctx context.Context, opts integrity.Options, lock *lockOptions, dryRun, progress bool) error {
	if progress {
		opts.Progress = func(p integrity.RuleProgress) {
			if p.Skipped {
				fmt.Fprintf(e.out.err, "repair: %s: done by the stopped repair (%s)\n", p.Rule, count(p.Fixed, "value"))
				return
			}
			fmt.Fprintf(e.out.err, "repair: %s: %s fixed, %d left\n", p.Rule, count(p.Fixed, "value"), p.Left)
		}
	}
	// The runner is the lease acquirer (--lock-wait, --lock-lease): two
	// repairs of one database never run at once.
	c, s, err := e.checker(ctx, opts, openOptions{lock: lock}, true)
	if err != nil {
		return err
	}
	defer s.close()
	rep, err := c.Repair(ctx, dryRun)
	switch {
	case rep == nil:
	case e.g.JSON && err != nil:
		// One object on stdout: the failure, carrying the report so far.
		return &resultError{err: err, result: rep}
	case e.g.JSON:
		return e.out.writeJSON(rep)
	default:
		if err != nil {
			fmt.Fprintln(e.out.out, "stopped before it finished; so far:")
		}
		renderRepairText(e.out, rep)
	}
	return err
}

func checkSummary(rep *integrity.Report) string {
	if len(rep.Rules) == 0 {
		return "nothing checked: the migration files declare no integrity rules (docs/integrity.md)"
	}
	if rep.OutOfLine == 0 {
		return fmt.Sprintf("all in line (%s checked)", count(len(rep.Rules), "rule"))
	}
	return fmt.Sprintf("%s out of line (%s checked)", count(rep.OutOfLine, "value"), count(len(rep.Rules), "rule"))
}

// findingText is one finding as a line: _id, path, problem, values.
func findingText(f integrity.Finding) string {
	s := fmt.Sprintf("_id %s: %s", f.ID, f.Path)
	switch f.Problem {
	case integrity.ProblemDangling:
		return s + " = " + string(f.Stored) + ": names no document"
	case integrity.ProblemMissing:
		return s + ": snapshot missing"
	case integrity.ProblemType:
		return fmt.Sprintf("%s = %s: snapshot is not a %s", s, f.Stored, f.ExpectedType)
	}
	return fmt.Sprintf("%s = %s, expected %s", s, orMissing(f.Stored), orMissing(f.Expected))
}

func orMissing[T ~string](v T) string {
	if v == "" {
		return "(missing)"
	}
	return string(v)
}

func renderCheck(w io.Writer, color bool, rep *integrity.Report, format string) error {
	switch format {
	case "json":
		return (&output{out: w}).writeJSON(rep)
	case "markdown":
		return renderCheckMarkdown(w, rep)
	case "junit":
		return renderCheckJUnit(w, rep)
	}
	o := &output{out: w, color: color}
	head := o.green(checkSummary(rep))
	if rep.OutOfLine > 0 {
		head = o.red(checkSummary(rep))
	}
	fmt.Fprintln(o.out, head)
	if len(rep.Rules) == 0 {
		return nil
	}
	rows := [][]cell{{{text: "rule"}, {text: "method"}, {text: "checked"}, {text: "out of line"}}}
	for _, r := range rep.Rules {
		rows = append(rows, []cell{{text: r.Rule}, {text: r.Method}, {text: fmt.Sprint(r.Checked)}, {text: fmt.Sprint(r.OutOfLine)}})
	}
	o.table("  ", rows)
	last := ""
	for _, f := range rep.Findings {
		if f.Rule != last {
			fmt.Fprintf(o.out, "%s:\n", f.Rule)
			last = f.Rule
		}
		fmt.Fprintf(o.out, "  %s\n", findingText(f))
	}
	if rep.Truncated {
		fmt.Fprintln(o.out, "(more values out of line: run with --all to list them)")
	}
	return nil
}

func renderCheckMarkdown(w io.Writer, rep *integrity.Report) error {
	var b strings.Builder
	icon := "✅"
	if rep.OutOfLine > 0 {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s mongomig integrity check: %s\n\nDatabase `%s`.\n\n| rule | method | checked | out of line |\n|---|---|---|---|\n", icon, checkSummary(rep), rep.Database)
	for _, r := range rep.Rules {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d |\n", mdEscape(r.Rule), r.Method, r.Checked, r.OutOfLine)
	}
	if len(rep.Findings) > 0 {
		b.WriteString("\n| rule | `_id` | path | problem | stored | expected |\n|---|---|---|---|---|---|\n")
	}
	for _, f := range rep.Findings {
		exp := orMissing(f.Expected)
		if f.ExpectedType != "" {
			exp = "a " + f.ExpectedType
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | `%s` | `%s` |\n", mdEscape(f.Rule), mdEscape(string(f.ID)), mdEscape(f.Path), f.Problem, mdEscape(orMissing(f.Stored)), mdEscape(exp))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderCheckJUnit writes a suite per rule and a failing case per value
// out of line (one passing case for a rule in line).
func renderCheckJUnit(w io.Writer, rep *integrity.Report) error {
	out := junitSuites{Name: "mongomig check"}
	suites := map[string]*junitSuite{}
	for _, r := range rep.Rules {
		out.Suites = append(out.Suites, junitSuite{Name: r.Rule, Properties: []junitProperty{{Name: "method", Value: r.Method}, {Name: "checked", Value: fmt.Sprint(r.Checked)}}})
		if r.OutOfLine == 0 {
			s := &out.Suites[len(out.Suites)-1]
			s.Cases = append(s.Cases, junitCase{Classname: r.Collection, Name: fmt.Sprintf("%s in line", count(r.Checked, "document"))})
		}
	}
	for i := range out.Suites {
		suites[out.Suites[i].Name] = &out.Suites[i]
	}
	for _, f := range rep.Findings {
		s := suites[f.Rule]
		s.Cases = append(s.Cases, junitCase{Classname: f.Collection, Name: "_id " + string(f.ID) + " " + f.Path, Failure: &junitMessage{Message: f.Problem, Text: findingText(f)}})
		s.Failures++
	}
	for i := range out.Suites {
		out.Suites[i].Tests = len(out.Suites[i].Cases)
		out.Tests += out.Suites[i].Tests
		out.Failures += out.Suites[i].Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func renderRepairText(o *output, rep *integrity.RepairReport) {
	verbDone := "fixed"
	if rep.DryRun {
		verbDone = "would fix"
	}
	fmt.Fprintf(o.out, "%s %s, %s left out of line\n", verbDone, count(rep.Fixed, "value"), count(rep.Left, "value"))
	if rep.Resumed {
		fmt.Fprintln(o.out, "(resumed from a stopped repair's progress: the values it fixed are not counted here)")
	}
	for _, f := range rep.Fixes {
		outcome := f.Outcome
		if outcome == integrity.OutcomeConflict {
			outcome += "; run `mongomig repair` again"
		}
		fmt.Fprintf(o.out, "  %s _id %s %s: %s -> %s: %s\n", f.Rule, f.ID, f.Path, orMissing(f.Wrong), orMissing(f.Right), outcome)
	}
	if rep.Truncated {
		fmt.Fprintln(o.out, "(more fixes: run with --all to list them)")
	}
}
