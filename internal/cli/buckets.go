package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/runner"
)

func init() {
	commandExits["buckets"] = []exitDoc{
		{ExitOK, "every family is as declared (members created ahead, old ones dropped), or --dry-run printed what would change"},
		{ExitFailure, "a command failed (the members done so far stay: run buckets again)"},
		{ExitUsage, "bad flags or invalid files"},
		{ExitLock, "the migration lock was not acquired within --lock-wait"},
	}
}

func bucketsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "buckets",
		Usage: "create the members of time-bucketed families ahead of time and drop those past their keep (for a scheduler; up runs it too)",
		Description: "Brings every family the applied migrations declare (buckets: in the files) to its declared state\n" +
			"as of the server's clock: the members from the current period to `ahead` periods ahead exist with\n" +
			"the family's validator and indexes, the members kept are changed to them where they differ, and\n" +
			"members older than `keep` periods are dropped. Only collections the family's pattern names are\n" +
			"members. Runs under the migration lock; run again, it sends nothing. --dry-run lists the commands\n" +
			"and sends nothing.\n" + exitHelp("buckets"),
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the members that would be created and dropped, and every command; send nothing"},
		}, lockFlags()...),
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return usageError(fmt.Errorf("buckets takes no arguments, got %q", strings.Join(c.Args().Slice(), " ")))
			}
			return e.runBuckets(c.Context, c.Bool("dry-run"), openOptions{lock: parseLockFlags(c)})
		},
	}
}

func (e *env) runBuckets(ctx context.Context, dry bool, oo openOptions) error {
	s, err := e.open(ctx, oo, nil)
	if err != nil {
		return err
	}
	defer s.close()
	run, err := s.runner.Buckets(ctx, runner.BucketOptions{DryRun: dry})
	if err != nil {
		return err
	}
	if e.out.json {
		if run == nil {
			run = &runner.BucketRun{Families: []runner.FamilyMembers{}, Commands: []runner.CommandResult{}}
		}
		return e.out.writeJSON(run)
	}
	if run == nil {
		e.out.printf("no migration applied declares a bucket family (buckets: in the files)\n")
		return nil
	}
	e.renderBuckets(run, dry)
	return nil
}

// renderBuckets prints what a buckets run did (dry: would do): per family
// its members, the members created and dropped, and (dry) each command.
func (e *env) renderBuckets(run *runner.BucketRun, dry bool) {
	if run == nil {
		return
	}
	created, dropped := "created", "dropped"
	if dry {
		created, dropped = "would create", "would drop"
	}
	for _, f := range run.Families {
		keep := "kept forever"
		if f.Keep > 0 {
			keep = count(f.Keep, f.Period) + " kept"
		}
		e.out.printf("bucket family %s (%s, %d ahead, %s): %s\n", display(f.Pattern), f.Period, f.Ahead, keep, count(len(f.Members), "member"))
		for _, name := range f.Drop {
			e.out.printf("  %s %s (older than the %s kept)\n", e.out.yellow(dropped), display(name), count(f.Keep, f.Period))
		}
		for _, name := range f.Create {
			e.out.printf("  %s %s\n", e.out.green(created), display(name))
		}
		if len(f.Create) == 0 && len(f.Drop) == 0 {
			e.out.printf("  every member as declared\n")
		}
	}
	if dry {
		for _, c := range run.Commands {
			e.out.printf("  %s\n", c.Text)
		}
	}
	if n := changed(run); n > 0 && !dry {
		e.out.printf("buckets: %s sent\n", count(n, "command"))
	}
	for _, name := range run.ClientSide {
		e.out.warnf("%s: the server does not enforce the family's validator: the member is created without it", display(name))
	}
}

func changed(run *runner.BucketRun) int {
	n := 0
	for _, c := range run.Commands {
		if c.Outcome != runner.OutcomeSkipped {
			n++
		}
	}
	return n
}

// dryRunBuckets prints, after up --dry-run's plan, what up would do to
// the bucket families once the pending migrations are applied.
func (e *env) dryRunBuckets(ctx context.Context, s *session, to int64) error {
	run, err := s.runner.PlanBuckets(ctx, to)
	if err != nil || run == nil {
		return err
	}
	e.out.printf("\n")
	e.renderBuckets(run, true)
	return nil
}
