package runner

import (
	"context"
	"time"

	"github.com/mongomig/mongomig/pkg/events"
)

// acceptDrift records, with --allow-drift, the files as they are now for
// every drifted applied migration, so the next run without the flag does
// not refuse again. It is called under the lock.
func (r *Runner) acceptDrift(ctx context.Context) error {
	if !r.cfg.allowDrift {
		return nil
	}
	st, err := r.status(ctx)
	if err != nil {
		return err
	}
	var now time.Time
	for _, ms := range st.Migrations {
		if ms.State != StateDrifted {
			continue
		}
		m := r.migrationByVersion(ms.Version)
		if now.IsZero() {
			if now, err = serverTime(ctx, r.db); err != nil {
				return err
			}
		}
		if err := r.ledger.AcceptDrift(ctx, m, ms.LedgerChecksum, now); err != nil {
			return err
		}
		r.cfg.log.Log(events.DriftAccepted{Version: m.Version, File: m.File})
	}
	return nil
}
