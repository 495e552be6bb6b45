package runner

import (
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// heldOptions reads coll's options (internal/lifecycle's Held): as the
// server holds them, or, for a collection an earlier pending migration of
// the same run creates, as the files declare them; onServer is false when
// the server does not have coll yet.
func (pl *lifecyclePlan) heldOptions(coll string) (h lifecycle.Held, onServer bool) {
	s, ok := pl.srv[coll]
	if !ok {
		if o := migration.OptionsBefore(pl.r.migrations, coll, pl.m.Version); o != nil {
			h = lifecycle.HeldInFiles(o)
		}
		return h, false
	}
	return lifecycle.HeldOnServer(s.Options), true
}
