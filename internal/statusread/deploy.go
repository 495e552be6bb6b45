package statusread

// Where a deploy stands, per collection: the backfill as its checkpoint
// records it (internal/state owns the checkpoint; this file only reads
// it), what the next `up` will do, the effective level and action, and
// the documents that should not be there (anomalies); the releases that
// hold a window open, and the marks.

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/pkg/release"
)

// Deploy adds to each row of colls what a deploy needs to see: the
// backfill, the next up (rows are the migrations' rows), the effective
// level and action, and the anomalies (counted when the documents were,
// else queried when check is set).
func (r *Reader) Deploy(ctx context.Context, colls []statusview.CollectionStatus, rows []statusview.MigrationStatus, entries map[int64]ledger.Entry, check bool) error {
	top := ledger.MaxApplied(entries)
	applied := func(v int64) bool { _, ok := entries[v]; return ok }
	for i := range colls {
		cs := &colls[i]
		if cs.ValidatorFrom != 0 {
			_, cs.LevelFrom, _, cs.ActionFrom = serverstate.DeclaredSettings(r.Migrations, cs.Name, top, applied)
		}
		if err := r.backfillOf(ctx, cs); err != nil {
			return err
		}
		cs.NextUp = r.nextUp(rows, cs, top)
		if r.Registry.Current(cs.Name) == 0 {
			continue // its documents carry no version
		}
		if cs.Documents != nil {
			statusview.CountedAnomalies(cs, r.Registry.Versions(cs.Name))
		} else if check {
			if err := r.queriedAnomalies(ctx, cs); err != nil {
				return err
			}
		}
	}
	return nil
}

// backfillOf sets cs.Backfill from the collection's checkpoint (nil: no
// backfill ever ran, or its documents carry no version).
func (r *Reader) backfillOf(ctx context.Context, cs *statusview.CollectionStatus) error {
	if r.Registry.Current(cs.Name) == 0 {
		return nil
	}
	cp, err := r.State.Read(ctx, cs.Name)
	if err != nil || cp == nil {
		return err
	}
	b := statusview.Backfill(cp)
	if !cp.RangesCounted {
		// A parallel backfill: its ranges count apart until it finishes.
		n, err := r.State.RangesUpgraded(ctx, cs.Name, cp.Target)
		if err != nil {
			return err
		}
		b.Upgraded += n
		if plan, err := r.State.Plan(ctx, cs.Name, cp.Target); err != nil {
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
func (r *Reader) nextUp(rows []statusview.MigrationStatus, cs *statusview.CollectionStatus, top int64) string {
	var pending []string
	for _, row := range rows {
		if row.State != statusview.StatePending {
			continue
		}
		for _, m := range r.Migrations {
			if m.Version == row.Version && m.Collection(cs.Name) != nil {
				pending = append(pending, fmt.Sprintf("%04d", m.Version))
			}
		}
	}
	return statusview.NextUp(cs, pending, r.Window.DocVersionAt(cs.Name, top))
}

// queriedAnomalies looks for each kind of anomaly with a query, limit 1.
func (r *Reader) queriedAnomalies(ctx context.Context, cs *statusview.CollectionStatus) error {
	belowFilter, unknownFilter := statusview.AnomalyFilters(r.Registry, cs)
	var below int64
	if belowFilter != nil {
		var err error
		if below, err = r.one(ctx, cs.Name, belowFilter, fmt.Sprintf("below version %d", cs.CurrentVersion)); err != nil {
			return err
		}
	}
	unknown, err := r.one(ctx, cs.Name, unknownFilter, "at a version no file knows")
	if err != nil {
		return err
	}
	statusview.AddAnomalies(cs, cs.AboveCurrent, below, unknown, nil)
	return nil
}

// one is 1 when a document of coll matches filter, else 0 (what: the
// documents looked for, in the error).
func (r *Reader) one(ctx context.Context, coll string, filter bson.D, what string) (int64, error) {
	err := r.DB.Collection(coll).FindOne(ctx, filter, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case err == nil:
		return 1, nil
	case errors.Is(err, mongo.ErrNoDocuments):
		return 0, nil
	}
	return 0, fmt.Errorf("look for %s documents %s: %w", coll, what, err)
}

// FindAboveCurrent sets AboveCurrent to 1 for each row of colls holding
// a document above its current version (one query with limit 1 each).
func (r *Reader) FindAboveCurrent(ctx context.Context, colls []statusview.CollectionStatus) error {
	for i, c := range colls {
		if r.Registry.Current(c.Name) == 0 {
			continue // its documents carry no version
		}
		n, err := r.one(ctx, c.Name, r.Registry.VersionAtLeast(c.CurrentVersion+1), fmt.Sprintf("above version %d", c.CurrentVersion))
		if err != nil {
			return err
		}
		if n > 0 {
			colls[i].AboveCurrent = 1
		}
	}
	return nil
}

// HeldByReleases says, in each row's NextUp, that a window stays open
// for the live releases behind it, once migration top is applied.
func (r *Reader) HeldByReleases(colls []statusview.CollectionStatus, live []release.Release, top int64) {
	for i := range colls {
		statusview.HeldByReleases(&colls[i], live, r.Window.DocVersionAt(colls[i].Name, top))
	}
}

// Marks are the marks recorded, oldest first (nil: none), with each
// migration row's mark set from its ledger entry.
func (r *Reader) Marks(ctx context.Context, rows []statusview.MigrationStatus, entries map[int64]ledger.Entry) ([]ledger.Mark, error) {
	marks, err := r.Ledger.Marks(ctx)
	if err != nil {
		return nil, err
	}
	for i, m := range rows {
		if e, ok := entries[m.Version]; ok && e.Marked != nil {
			rows[i].Marked = e.Marked
		}
	}
	if len(marks) == 0 {
		return nil, nil
	}
	return marks, nil
}
