package runner

// The releases status lists: the live announcements (pkg/release), and
// what they hold: a window the next up would close stays open while a
// release that knows only older versions runs (releases.go).

import (
	"context"

	"github.com/mongomig/mongomig/internal/statusview"
)

// releasesOf sets st.Releases and says, in each collection's NextUp, that
// a window stays open for the releases behind.
func (r *Runner) releasesOf(ctx context.Context, st *Status) error {
	live, err := r.LiveReleases(ctx)
	if err != nil {
		return err
	}
	st.Releases = live
	if r.cfg.allowOldReleases {
		return nil
	}
	top := maxApplied(st.applied)
	for i := range st.Collections {
		statusview.HeldByReleases(&st.Collections[i], live, r.docVersionAt(st.Collections[i].Name, top))
	}
	return nil
}
