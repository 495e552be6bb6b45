package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

func markCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "mark",
		Usage:     "record a migration as applied or not applied without sending anything (the escape hatch)",
		ArgsUsage: "VERSION",
		Description: "Records migration VERSION as applied (--applied: a ledger entry with the file's checksums, as if\n" +
			"up had applied it) or as not applied (--not-applied: its ledger entry removed), under the migration\n" +
			"lock, sending nothing to the migrated collections. --reason is required and kept with the mark;\n" +
			"status shows it. For a migration whose commands were run by hand, or a server that can no longer\n" +
			"repeat one.\n" +
			"Exit codes: 0 recorded, 1 refused (already in that state, or a file below it pending / above it\n" +
			"applied) or failed, 2 bad arguments, 4 the lock was not acquired in time.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "applied", Usage: "record the migration as applied"},
			&cli.BoolFlag{Name: "not-applied", Usage: "remove the migration's ledger entry"},
			&cli.StringFlag{Name: "reason", Usage: "why (required; kept in the ledger and shown by status)"},
		}, lockFlags()...),
		Action: func(c *cli.Context) error {
			o, err := parseMarkArgs(c)
			if err != nil {
				return err
			}
			return e.runMark(c.Context, o)
		},
	}
}

// markOptions are mark's parsed argument and flags.
type markOptions struct {
	version int64
	applied bool
	reason  string
	open    openOptions
}

func parseMarkArgs(c *cli.Context) (markOptions, error) {
	if c.Args().Len() != 1 {
		return markOptions{}, usageError(fmt.Errorf("mark takes one migration version, such as `mongomig mark 3 --applied --reason \"...\"`; got %q", strings.Join(c.Args().Slice(), " ")))
	}
	v, err := strconv.ParseInt(strings.TrimLeft(c.Args().First(), "0"), 10, 64)
	if err != nil || v <= 0 {
		return markOptions{}, usageError(fmt.Errorf("mark %q: give the migration's number (3 or 0003)", c.Args().First()))
	}
	applied, notApplied := c.Bool("applied"), c.Bool("not-applied")
	if applied == notApplied {
		return markOptions{}, usageError(errors.New("mark: give exactly one of --applied and --not-applied"))
	}
	reason := strings.TrimSpace(c.String("reason"))
	if reason == "" {
		return markOptions{}, usageError(errors.New("mark: --reason is required (it is kept in the ledger and shown by status), such as --reason \"index built by hand after the crash\""))
	}
	return markOptions{version: v, applied: applied, reason: reason, open: openOptions{lock: parseLockFlags(c)}}, nil
}

func (e *env) runMark(ctx context.Context, o markOptions) error {
	s, err := e.open(ctx, o.open, nil)
	if err != nil {
		return err
	}
	defer s.close()
	mk, err := s.runner.Mark(ctx, o.version, o.applied, o.reason)
	if err != nil {
		var me *runner.MarkError
		if errors.As(err, &me) {
			return &worded{err: err, msg: err.Error() + "; mongomig status shows what is applied"}
		}
		return err
	}
	if e.out.json {
		return e.out.writeJSON(mk)
	}
	state := "applied"
	if !mk.Applied {
		state = "not applied"
	}
	e.out.printf("marked %s as %s (nothing was sent to the collections): %s\n", display(migration.DisplayName(mk.File)), state, display(mk.Reason))
	return nil
}
