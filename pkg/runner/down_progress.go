package runner

import (
	"context"
	"time"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// stoppedDowngrading wraps a cancelled revert's error with the documents
// it downgraded, which [interrupted] finds with downgradedBy (internal/downgrade).
var (
	stoppedDowngrading = downgradewalk.Stopped
	downgradedBy       = downgradewalk.Downgraded
)

// downProgress counts the documents of one collection a revert has
// downgraded and reports them after every batch.
type downProgress struct {
	r     *Runner
	m     *migration.Migration
	d     downgrade
	done  int64
	start time.Time
}

func (p *downProgress) add(n int64) {
	p.done += n
	total := max(p.d.count, p.done)
	rate := float64(p.done) / max(time.Since(p.start).Seconds(), 0.001)
	p.r.cfg.log.Log(events.DowngradeProgress{Version: p.m.Version, File: p.m.File, Collection: p.d.coll, From: p.d.from, To: p.d.to, Count: p.done, Total: total, Rate: rate})
}

// noteGuardScans sends [EventDownGuardScans] once, before the first
// document pass of a revert, when the server evaluates a guarded write by
// scanning the collection. The guards stay: the lock keeps other mongomig
// runs out, not the application, and a write filtered on _id alone would
// overwrite an application write made since down read the document.
func (r *Runner) noteGuardScans(ctx context.Context, dp *downPlan) error {
	var n int64
	for _, t := range dp.targets {
		for _, d := range t.downs {
			n += d.count
		}
	}
	if n == 0 {
		return nil
	}
	info, err := probe.Server(ctx, r.db)
	if err != nil {
		return err
	}
	g := probe.GuardedWrites(info)
	if g.Available {
		return nil
	}
	r.cfg.log.Log(events.DownGuardScans{Total: n, Reason: g.Reason})
	return nil
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
