package backfill

import (
	"context"

	"github.com/mongomig/mongomig/pkg/release"
)

// checkReleases refuses, before anything is written, a backfill of names
// while a live release knows only versions of one below its target: the
// documents it upgrades would be too new for that release to read
// (a *version.TooNewError). Without announcements nothing is live and
// nothing is refused; IgnoreReleases skips the check.
func (r *backfiller) checkReleases(ctx context.Context, names []string, opts Options) error {
	if opts.IgnoreReleases {
		return nil
	}
	live, err := release.Live(ctx, r.db, "")
	if err != nil || len(live) == 0 {
		return err
	}
	for _, n := range names {
		target := r.registry.Current(n)
		if behind := release.Behind(live, n, target); len(behind) > 0 {
			return &release.BehindError{What: "backfill", Collection: n, Target: target, Releases: behind}
		}
	}
	return nil
}
