package runner

// Where a deploy stands, per collection: the backfill as its checkpoint
// records it (internal/state owns the checkpoint; this file only reads
// it), what the next `up` will do, and the documents that should not be
// there (anomalies). Status reads; nothing here writes.

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/statusview"
)

// deployStatus adds to st what a deploy needs to see: per collection the
// backfill, the next up, the effective level and action, the anomalies
// and the server's differences from the files; and the marks.
func (r *Runner) deployStatus(ctx context.Context, st *Status, opts StatusOptions) error {
	top := maxApplied(st.applied)
	for i := range st.Collections {
		cs := &st.Collections[i]
		r.effectiveOf(cs, st.applied)
		if err := r.backfillOf(ctx, cs); err != nil {
			return err
		}
		cs.NextUp = r.nextUp(st, cs, top)
		if r.registry.Current(cs.Name) == 0 {
			continue // its documents carry no version
		}
		if cs.Documents != nil {
			statusview.CountedAnomalies(cs, r.registry.Versions(cs.Name))
		} else if opts.Check {
			if err := r.queriedAnomalies(ctx, cs); err != nil {
				return err
			}
		}
	}
	if err := r.serverDrift(ctx, st); err != nil {
		return err
	}
	return r.marksOf(ctx, st)
}

// backfillOf sets cs.Backfill from the collection's checkpoint (nil: no
// backfill ever ran, or its documents carry no version).
func (r *Runner) backfillOf(ctx context.Context, cs *CollectionStatus) error {
	if r.registry.Current(cs.Name) == 0 {
		return nil
	}
	cp, err := r.readCheckpoint(ctx, cs.Name)
	if err != nil || cp == nil {
		return err
	}
	b := statusview.Backfill(cp)
	if !cp.RangesCounted {
		// A parallel backfill: its ranges count apart until it finishes.
		n, err := r.state.RangesUpgraded(ctx, cs.Name, cp.Target)
		if err != nil {
			return err
		}
		b.Upgraded += n
		if plan, err := r.state.Plan(ctx, cs.Name, cp.Target); err != nil {
			return err
		} else if plan != nil && !cp.Done {
			b.Resumable = true
		}
	}
	if n := statusview.Remaining(cs); n != nil {
		b.Remaining = n
	}
	cs.Backfill = b
	return nil
}

// nextUp says what the next `up` does to cs.
func (r *Runner) nextUp(st *Status, cs *CollectionStatus, top int64) string {
	var pending []string
	for _, m := range st.Migrations {
		if mm := r.migrationByVersion(m.Version); m.State == StatePending && mm != nil && mm.Collection(cs.Name) != nil {
			pending = append(pending, fmt.Sprintf("%04d", m.Version))
		}
	}
	return statusview.NextUp(cs, pending, r.docVersionAt(cs.Name, top))
}

// queriedAnomalies looks for each kind of anomaly with a query, limit 1.
func (r *Runner) queriedAnomalies(ctx context.Context, cs *CollectionStatus) error {
	one := func(filter bson.D, what string) (int64, error) {
		err := r.db.Collection(cs.Name).FindOne(ctx, filter, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		switch {
		case err == nil:
			return 1, nil
		case errors.Is(err, mongo.ErrNoDocuments):
			return 0, nil
		}
		return 0, fmt.Errorf("look for %s documents %s: %w", cs.Name, what, err)
	}
	belowFilter, unknownFilter := statusview.AnomalyFilters(r.registry, cs)
	var below int64
	if belowFilter != nil {
		var err error
		if below, err = one(belowFilter, fmt.Sprintf("below version %d", cs.CurrentVersion)); err != nil {
			return err
		}
	}
	unknown, err := one(unknownFilter, "at a version no file knows")
	if err != nil {
		return err
	}
	statusview.AddAnomalies(cs, cs.AboveCurrent, below, unknown, nil)
	return nil
}
