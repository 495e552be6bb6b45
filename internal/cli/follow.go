package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mongomig/mongomig/pkg/integrity"
)

// followInstead is what the command line advises on a server without
// change streams.
const followInstead = "run `mongomig check` and `mongomig repair` on a schedule instead (docs/integrity.md#scheduling-the-job)"

// runFollow is `repair --follow`: the follower of pkg/integrity, its full
// passes rendered as repair's report and each event's fixes as they are
// written, until a signal (exit 130: the next follower resumes from the
// stored token) or an error.
func (e *env) runFollow(ctx context.Context, opts integrity.Options, lock *lockOptions, preImages bool) error {
	c, s, err := e.checker(ctx, opts, openOptions{lock: lock}, true)
	if err != nil {
		return err
	}
	defer s.close()
	fo := integrity.FollowOptions{PreImages: preImages}
	fo.FullPass = func(reason string, rep *integrity.RepairReport) {
		if e.g.JSON {
			_ = e.out.writeJSON(struct {
				FullPass string                  `json:"fullPass"`
				Repair   *integrity.RepairReport `json:"repair"`
			}{reason, rep})
			return
		}
		fmt.Fprintf(e.out.out, "follow: a full check and repair first (%s):\n", reason)
		renderRepairText(e.out, rep)
	}
	fo.Applied = func(a *integrity.Applied) {
		if e.g.JSON {
			_ = e.out.writeJSON(struct {
				Applied *integrity.Applied `json:"applied"`
			}{a})
			return
		}
		renderApplied(e.out, a)
	}
	fo.Retrying = func(err error, wait time.Duration) {
		fmt.Fprintf(e.out.err, "follow: %v; starting again from the stored token in %s\n", err, wait)
	}
	fo.Opened = func(watched []string, resumed bool) {
		from := "from the cluster time before the full pass"
		if resumed {
			from = "from the stored resume token"
		}
		fmt.Fprintf(e.out.err, "follow: watching %s of %s %s (Ctrl-C stops)\n", strings.Join(watched, ", "), s.db.Name(), from)
	}
	err = c.Follow(ctx, fo)
	if ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: errors.New("repair --follow stopped by a signal; the next `mongomig repair --follow` resumes from the stored token")}
	}
	return err
}

// renderApplied prints one event's fixes, nothing for an event that
// needed none.
func renderApplied(o *output, a *integrity.Applied) {
	var modified int64
	for _, p := range a.Propagated {
		modified += p.Modified
	}
	if len(a.Fixes) == 0 && modified == 0 && len(a.Rescanned) == 0 {
		return
	}
	what := a.Operation + " " + a.Collection
	if a.ID != "" {
		what += " _id " + string(a.ID)
	}
	fmt.Fprintf(o.out, "follow: %s: %s propagated, %s\n", what, count(modified, "copy"), count(len(a.Fixes), "fix"))
	for _, r := range a.Rescanned {
		fmt.Fprintf(o.out, "  rescanned %s (the event does not say which documents it changed)\n", r)
	}
	for _, f := range a.Fixes {
		fmt.Fprintf(o.out, "  %s _id %s %s: %s -> %s: %s\n", f.Rule, f.ID, f.Path, orMissing(f.Wrong), orMissing(f.Right), f.Outcome)
	}
}
