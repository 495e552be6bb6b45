package runner

import (
	"context"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/pkg/events"
)

// stoppedDowngrading wraps a cancelled revert's error with the documents
// it downgraded, which [interrupted] finds with downgradedBy (internal/downgrade).
var (
	stoppedDowngrading = downgradewalk.Stopped
	downgradedBy       = downgradewalk.Downgraded
)

// noteGuardScans sends [EventDownGuardScans] once, before the first
// document pass of a revert, when the server evaluates a guarded write by
// scanning the collection (internal/downgrade's GuardScans).
func (r *Runner) noteGuardScans(ctx context.Context, dp *downPlan) error {
	var n int64
	for _, t := range dp.targets {
		for _, d := range t.Downs {
			n += d.Count
		}
	}
	scans, reason, err := downgradewalk.GuardScans(ctx, r.db, n)
	if scans {
		r.cfg.log.Log(events.DownGuardScans{Total: n, Reason: reason})
	}
	return err
}

// A revert's document counts are internal/downgrade's.
type (
	// DocumentChange counts documents a down moved from one version to
	// another.
	DocumentChange = downgradewalk.DocumentChange
	// DowngradedDocuments are the documents a revert stopped by an
	// interruption had already downgraded, per collection.
	DowngradedDocuments = downgradewalk.DowngradedDocuments
	// DowngradeCount is one collection's share of [DowngradedDocuments].
	DowngradeCount = downgradewalk.DowngradeCount
	// DowngradeError is a revert refused before anything changed because
	// documents are at a version the migration cannot take them back from.
	DowngradeError = downgradewalk.DowngradeError
)
