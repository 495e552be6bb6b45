package runner

// Tightening holds while an older release runs: closing a collection's
// validator window to its current schema would refuse every write of a
// live release (pkg/release) that knows only older versions of it (it
// stamps the version it knows). Up leaves such a window open, says who
// still runs, and closes it on a later up once they are gone; without
// announcements nothing is live and nothing is held.
// WithAllowOldReleases closes it anyway.

import (
	"context"

	"github.com/mongomig/mongomig/pkg/release"
)

// HeldWindow is a validator window up could close and left open
// ([release.HeldWindow]).
type HeldWindow = release.HeldWindow

// WithAllowOldReleases makes up close validator windows while releases
// that know only older versions are live (`up --allow-old-releases`).
func WithAllowOldReleases(allow bool) Option {
	return optionFunc(func(c *config) error {
		c.allowOldReleases = allow
		return nil
	})
}

// holdTightening splits cmds, the tightening collMods once migration top
// is applied, into those to send and the windows held for live releases
// (windowplan's Hold).
func (r *Runner) holdTightening(ctx context.Context, top int64, cmds []Command) ([]Command, []HeldWindow, error) {
	return r.windows().Hold(ctx, top, cmds)
}

// LiveReleases lists the releases announced in the database whose
// announcement has not expired (pkg/release).
func (r *Runner) LiveReleases(ctx context.Context) ([]release.Release, error) {
	return release.Live(ctx, r.db, "")
}
