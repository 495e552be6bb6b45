package cli

import (
	"context"
	"testing/fstest"

	"github.com/urfave/cli/v2"
)

func unlockCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "unlock",
		Usage: "release a stale migration lock",
		Description: "Without --force, removes the lock only if its lease has expired (the holder is gone).\n" +
			"With --force, removes it whatever its lease: only when you know the holder is dead.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "remove the lock even though its lease has not expired"}},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return e.runUnlock(c.Context, c.Bool("force"))
		},
	}
}

type unlockResult struct {
	Removed bool   `json:"removed"`
	Holder  string `json:"holder,omitempty"`
}

func (e *env) runUnlock(ctx context.Context, force bool) error {
	// Unlocking needs no migration files: an invalid directory must not
	// keep a stale lock in place.
	s, err := e.open(ctx, nil, fstest.MapFS{})
	if err != nil {
		return err
	}
	defer s.close()
	h, err := s.runner.Unlock(ctx, force)
	if err != nil {
		return err
	}
	res := unlockResult{Removed: h != nil}
	if h != nil {
		res.Holder = h.String()
	}
	if e.out.json {
		return e.out.writeJSON(res)
	}
	if h == nil {
		e.out.printf("no lock is held\n")
	} else {
		e.out.printf("%s the lock of %s\n", e.out.green("removed"), h)
	}
	return nil
}
