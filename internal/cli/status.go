package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/runner"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "applied, pending and drifted migrations; per collection the validator in force and document versions",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "exit 3 if anything is pending or drifted"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return e.runStatus(c.Context, c.Bool("check"))
		},
	}
}

func (e *env) runStatus(ctx context.Context, check bool) error {
	s, err := e.open(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer s.close()
	st, err := s.runner.Status(ctx)
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
	if check && !st.Clean() {
		return silentExit(ExitCheck)
	}
	return nil
}

func (e *env) renderStatus(st *runner.Status) {
	o := e.out
	o.printf("%s the database is at version %d of %d (%d pending, %d drifted)\n", o.bold("migrations"), st.Current, st.Latest, st.Pending, st.Drifted)
	for _, m := range st.Migrations {
		state := m.State
		switch m.State {
		case runner.StateApplied:
			state = o.green(fmt.Sprintf("%-8s", state))
		case runner.StatePending:
			state = o.yellow(fmt.Sprintf("%-8s", state))
		default:
			state = o.red(fmt.Sprintf("%-8s", state))
		}
		when := ""
		if m.AppliedAt != nil {
			when = m.AppliedAt.UTC().Format("2006-01-02 15:04:05Z") + " by " + m.AppliedBy
		}
		o.printf("  %04d %s %-40s %s\n", m.Version, state, m.File, o.faint(when))
	}
	o.printf("%s\n", o.bold("collections"))
	for _, c := range st.Collections {
		validator := "no validator"
		if c.ValidatorFrom > 0 {
			validator = fmt.Sprintf("validator of %04d, %s", c.ValidatorFrom, c.Enforcement)
			if c.Level != "" || c.Action != "" {
				validator += fmt.Sprintf(" (%s/%s)", orDash(c.Level), orDash(c.Action))
			}
			if c.Window != "" {
				validator += ", window " + c.Window
			}
		}
		var docs []string
		for _, d := range c.Documents {
			if d.Invalid != "" {
				docs = append(docs, fmt.Sprintf("%d with invalid version %s", d.Count, d.Invalid))
			} else {
				docs = append(docs, fmt.Sprintf("v%d: %d", d.Version, d.Count))
			}
		}
		if len(docs) == 0 {
			docs = []string{"no documents"}
		}
		o.printf("  %-10s %s; documents %s (current version %d)\n", c.Name, validator, strings.Join(docs, ", "), c.CurrentVersion)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
