package runner

// The releases status lists: the live announcements (pkg/release), and
// what they hold: a window the next up would close stays open while a
// release that knows only older versions runs (releases.go).

import (
	"context"
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/release"
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
		cs := &st.Collections[i]
		if !strings.HasPrefix(cs.NextUp, "closes the window of ") {
			continue
		}
		cv := r.docVersionAt(cs.Name, top)
		if behind := release.Behind(live, cs.Name, cv); len(behind) > 0 {
			cs.NextUp = fmt.Sprintf("leaves the window of %s open while %s still running (it closes on an up once they are gone)", cs.Name, release.Names(behind, cs.Name))
		}
	}
	return nil
}
