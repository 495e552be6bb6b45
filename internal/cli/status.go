package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "applied, pending and drifted migrations; per collection the validator in force and document versions",
		Description: "Reads the ledger, the files, the backfill checkpoints and the leases; --counts also counts each\n" +
			"collection's documents per version (a scan of every migrated collection).\n" + exitHelp("status"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "exit 3 if anything is pending or drifted, the server differs from the files, or documents are where they should not be"},
			&cli.BoolFlag{Name: "counts", Usage: "count each collection's documents per version (scans every migrated collection)"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return e.runStatus(c.Context, parseStatusFlags(c))
		},
	}
}

// statusOptions are status's parsed flags.
type statusOptions struct {
	check  bool // --check: exit 3 unless clean
	counts bool // --counts: count documents per version
}

func parseStatusFlags(c *cli.Context) statusOptions {
	return statusOptions{check: c.Bool("check"), counts: c.Bool("counts")}
}

func (e *env) runStatus(ctx context.Context, o statusOptions) error {
	s, err := e.open(ctx, openOptions{}, nil)
	if err != nil {
		return err
	}
	defer s.close()
	st, err := s.runner.StatusOf(ctx, runner.StatusOptions{Counts: o.counts, Check: o.check})
	if err != nil {
		return err
	}
	if e.out.json {
		if err := e.out.writeJSON(st); err != nil {
			return err
		}
	} else {
		e.renderStatus(st)
	}
	if o.check && !st.Clean() {
		return silentExit(ExitCheck)
	}
	return nil
}

func (e *env) renderStatus(st *runner.Status) {
	o := e.out
	if st.Current > st.Latest {
		o.printf("%s the database is at version %d, beyond the files (the last is %d; %s)\n", o.bold("migrations:"), st.Current, st.Latest, statusCounts(st))
	} else {
		o.printf("%s the database is at version %d of %d (%s)\n", o.bold("migrations:"), st.Current, st.Latest, statusCounts(st))
	}
	var rows [][]cell
	for _, m := range st.Migrations {
		paint := o.red
		switch m.State {
		case runner.StateApplied:
			paint = o.green
		case runner.StatePending:
			paint = o.yellow
		}
		when := ""
		if m.AppliedAt != nil {
			when = m.AppliedAt.UTC().Format("2006-01-02 15:04:05Z") + " by " + display(m.AppliedBy)
		}
		if m.Marked != nil {
			when += ", marked: " + display(m.Marked.Reason)
		}
		rows = append(rows, []cell{{text: fmt.Sprintf("%04d", m.Version)}, {text: m.State, paint: paint}, {text: migration.DisplayName(m.File)}, {text: when, paint: o.faint}})
	}
	o.table("  ", rows)
	o.printf("%s\n", o.bold("collections"))
	counted := false
	for _, c := range st.Collections {
		counted = counted || c.Documents != nil
	}
	rows = [][]cell{{{text: "collection", paint: o.faint}, {text: "validator", paint: o.faint}, {text: "documents", paint: o.faint}, {text: "upgrade target", paint: o.faint}}}
	for _, c := range st.Collections {
		docs := versionsText(c.Documents)
		if !counted {
			docs = "-"
		}
		rows = append(rows, []cell{{text: c.Name}, {text: validatorText(c)}, {text: docs}, {text: upgradedToText(c)}})
	}
	o.table("  ", rows)
	if !counted && len(st.Collections) > 0 {
		o.printf("  %s\n", o.faint("documents per version: mongomig status --counts (scans every migrated collection)"))
	}
	for _, c := range st.Collections {
		switch c.Enforcement {
		case runner.EnforcementAbsent:
			o.printf("  %s %s: %s (`mongomig info` says whether this server keeps what create sends)\n", o.red("NOT ENFORCED"), c.Name, c.EnforcementNote)
		case runner.EnforcementDiffers:
			o.printf("  %s %s: %s\n", o.red("OTHER VALIDATOR"), c.Name, c.EnforcementNote)
		}
		if c.AboveCurrent > 0 {
			n := "documents"
			if counted {
				n = count(c.AboveCurrent, "document")
			}
			o.printf("  %s %s: %s above version %d, the one the applied migrations give: a release the applied files do not know wrote them, or a backfill ran past a down; a release running these files cannot read them\n",
				o.red("TOO NEW"), c.Name, n, c.CurrentVersion)
		}
	}
	e.renderDeploy(st)
	e.renderReleases(st.Releases)
	e.renderLifecycle(st) // status_lifecycle.go
	if len(st.Leases) > 0 {
		o.printf("%s\n", o.bold("leases"))
		rows = nil
		for _, l := range st.Leases {
			state := o.green("held")
			if l.Expired {
				state = o.yellow("expired")
			}
			rows = append(rows, []cell{{text: display(l.Name)}, {text: state}, {text: display(l.Holder())},
				{text: "until " + l.ExpiresAt.UTC().Format("2006-01-02 15:04:05Z"), paint: o.faint}})
		}
		o.table("  ", rows)
	}
}

// validatorText is the validator in force: the migration it comes from,
// where it is enforced, level and action, and the window.
func validatorText(c runner.CollectionStatus) string {
	if c.ValidatorFrom == 0 {
		return "none"
	}
	s := fmt.Sprintf("%04d, %s", c.ValidatorFrom, c.Enforcement)
	if c.Level != "" || c.Action != "" {
		s += fmt.Sprintf(" (%s, %s)", orDash(c.Level), orDash(c.Action))
	}
	if c.Window != "" {
		s += ", window " + c.Window
	}
	if len(c.WindowBranches) > 0 {
		var bs []string
		for _, b := range c.WindowBranches {
			what := fmt.Sprintf("%04d", b.SchemaFrom)
			if b.Unchecked {
				what = "unchecked"
			}
			bs = append(bs, fmt.Sprintf("v%d: %s", b.Version, what))
		}
		s += " [" + strings.Join(bs, ", ") + "]"
	}
	for _, x := range c.ExtractWindows {
		s += fmt.Sprintf(", extract window open (%04d run %d: %s)", x.Migration, x.Run, x.Array)
	}
	return s
}

// upgradedToText is the upgrade target: the document version the applied
// migrations upgrade documents to and, when pending migrations go further,
// the version all files upgrade to. It is not the version documents are at
// (the documents column says that).
func upgradedToText(c runner.CollectionStatus) string {
	s := fmt.Sprintf("v%d", c.CurrentVersion)
	if c.TargetVersion != c.CurrentVersion {
		s += fmt.Sprintf(" (v%d with the pending migrations)", c.TargetVersion)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
