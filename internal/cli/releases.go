package cli

// Release announcements on the command line: the --allow-old-releases
// flag of up and backfill, what up puts back where the server differs,
// the windows held for older releases, and status's list of live
// releases.

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/runner"
)

const allowOldReleases = "allow-old-releases"

func allowOldReleasesFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: allowOldReleases, Usage: what + " even while a live release (an application announcing itself) knows only older versions of the collection"}
}

// wordReleases adds the advice to a refusal for live older releases.
func wordReleases(err error, command string) error {
	var be *release.BehindError
	if !errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("%w; wait until every pod runs the new release (`mongomig status` lists the live releases; an announcement expires by itself when its process is gone), or rerun `mongomig %s --%s` if documents it cannot read are acceptable", err, command, allowOldReleases)
}

// renderReasserted prints what up put back first.
func (e *env) renderReasserted(r *runner.Reasserted) {
	if r == nil {
		return
	}
	for _, d := range r.Differences {
		e.out.printf("%s %s\n", e.out.green("put back"), display(d.Message))
	}
}

// renderReassertPlan prints, first in a dry run, what up would put back.
func (e *env) renderReassertPlan(r *runner.Reassertion) {
	if r == nil {
		return
	}
	o := e.out
	o.printf("%s the server differs from the applied migrations; up first puts back:\n", o.bold("reassert"))
	for _, d := range r.Differences {
		o.printf("  %s\n", display(d.Message))
	}
	for _, c := range r.Commands {
		o.printf("  %s\n", display(string(c.Text)))
	}
	o.printf("\n")
}

// renderHeld warns of the windows up left open for older releases.
func (e *env) renderHeld(held []runner.HeldWindow) {
	for _, h := range held {
		e.out.warnf("%s", display(h.Message))
	}
}

func (e *env) renderHeldPlan(held []runner.HeldWindow) {
	for _, h := range held {
		e.out.printf("would leave the validator window of %s open: %s\n", display(h.Collection), display(h.Message))
	}
}

// renderReleases is status's list of live releases.
func (e *env) renderReleases(rs []release.Release) {
	if len(rs) == 0 {
		return
	}
	o := e.out
	o.printf("%s\n", o.bold("releases"))
	for _, r := range rs {
		var known []string
		for _, k := range r.Versions {
			known = append(known, fmt.Sprintf("%s v%d", k.Collection, k.Version))
		}
		o.printf("  %s: knows %s; announced until %s\n", display(r.String()), display(strings.Join(known, ", ")), r.ExpiresAt.UTC().Format(time.RFC3339))
	}
}
