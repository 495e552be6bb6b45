package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/internal/suggest"
	"github.com/mongomig/mongomig/pkg/runner"
)

func unlockCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "unlock",
		Usage:     "list the leases (migration lock, backfill leases) and release stale ones",
		ArgsUsage: "[NAME]",
		Description: "Lists every lease with its holder and expiry (by the server's clock) and removes those whose\n" +
			"lease has expired. With --force, removes the migration lock (or the lease NAME, such as\n" +
			"backfill:users) whatever its lease: only when you know the holder is dead.\n" + exitHelp("unlock"),
		Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "remove the lease even though it has not expired"}},
		Action: func(c *cli.Context) error {
			opts, err := parseUnlockArgs(c)
			if err != nil {
				return err
			}
			return e.runUnlock(c.Context, opts)
		},
	}
}

// unlockOptions are unlock's parsed flag and argument.
type unlockOptions struct {
	force bool   // --force: remove a live lease
	name  string // the lease NAME ("": the migration lock and expired leases)
}

func parseUnlockArgs(c *cli.Context) (unlockOptions, error) {
	if c.Args().Len() > 1 {
		return unlockOptions{}, usageError(fmt.Errorf("unlock takes at most one lease name, got %q", strings.Join(c.Args().Slice(), " ")))
	}
	return unlockOptions{force: c.Bool("force"), name: c.Args().First()}, nil
}

type unlockResult struct {
	Removed bool           `json:"removed"`
	Holder  string         `json:"holder,omitempty"`
	Leases  []runner.Lease `json:"leases"`
	Freed   []string       `json:"freed"`
}

func (e *env) runUnlock(ctx context.Context, o unlockOptions) error {
	force, name := o.force, o.name
	// Unlocking needs no migration files: an invalid directory must not
	// keep a stale lock in place.
	s, err := e.open(ctx, openOptions{}, fstest.MapFS{})
	if err != nil {
		return err
	}
	defer s.close()
	leases, err := s.runner.Leases(ctx)
	if err != nil {
		return err
	}
	res := unlockResult{Leases: leases, Freed: []string{}}
	if err := checkLeaseName(name, leases); err != nil {
		return err
	}
	targets := []string{name}
	switch {
	case name == "" && force:
		targets = []string{"mongomig"}
	case name == "":
		// Every expired lease, and the migration lock: a live one is
		// refused (exit 1), naming its holder.
		targets = nil
		for _, l := range leases {
			if l.Expired || l.Name == "mongomig" {
				targets = append(targets, l.Name)
			}
		}
	}
	for _, t := range targets {
		h, err := s.runner.UnlockLease(ctx, t, force)
		if err != nil {
			return err
		}
		if h != nil {
			res.Removed, res.Holder = true, h.String()
			res.Freed = append(res.Freed, t)
			if !e.out.json {
				what := "the lease " + t
				if t == "mongomig" {
					what = "the lock"
				}
				e.out.printf("%s %s of %s\n", e.out.green("removed"), display(what), display(h.String()))
			}
		}
	}
	if e.out.json {
		return e.out.writeJSON(res)
	}
	for _, l := range leases {
		if slices.Contains(res.Freed, l.Name) {
			continue
		}
		state := "held"
		if l.Expired {
			state = "expired"
		}
		e.out.printf("%s: %s by %s\n", display(l.Name), state, display(l.Info.String()))
	}
	switch {
	case len(res.Freed) > 0:
	case len(leases) == 0:
		e.out.printf("no lock is held\n")
	case name != "":
		e.out.printf("no lease %s is held\n", name)
	case force:
		e.out.printf("the migration lock is not held; to remove another lease, name it: mongomig unlock --force %s\n", display(leases[0].Name))
	default:
		e.out.printf("no expired lease to remove (use --force [NAME] for a live one whose holder you know is dead)\n")
	}
	return nil
}

// checkLeaseName refuses (exit 2) a NAME that is not held but is one edit
// or two from one that is: a typo must not read as "nothing to do".
func checkLeaseName(name string, leases []runner.Lease) error {
	if name == "" {
		return nil
	}
	names := make([]string, len(leases))
	for i, l := range leases {
		if l.Name == name {
			return nil
		}
		names[i] = l.Name
	}
	for _, n := range names {
		// The likeliest slip: a backfill lease named without its prefix.
		if strings.HasSuffix(n, ":"+name) {
			return usageError(fmt.Errorf("no lease %s is held; did you mean %s? (held: %s)", name, display(n), display(strings.Join(names, ", "))))
		}
	}
	if near, ok := suggest.Closest(name, names); ok {
		return usageError(fmt.Errorf("no lease %s is held; did you mean %s? (held: %s)", name, display(near), display(strings.Join(names, ", "))))
	}
	return nil
}
