package integrity

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/probe"
)

// ruleWalk is one rule's repair as its scan emits the findings. The
// guarded updates of a batch go in one unordered bulk write (a batch:
// Options.BatchSize fixes, or fewer when the progress is saved): when
// every guard matched, each is fixed; when some missed (a concurrent
// write), every document of the bulk is re-checked, and one still out
// of line is repaired on its own (re-checked on each miss, as before).
// A fix that needs a look-up first (a dangling reference) or deletes is
// sent on its own.
type ruleWalk struct {
	c           *Checker
	r           rule
	t           *tally
	dryRun      bool
	pace        *pacer
	fixed, left int64
	save        func(last bson.RawValue, fixed int64) error
	saved       time.Time
	prev        bson.RawValue
	complete    bson.RawValue // the last document whose every finding is queued or handled
	pending     []Finding
	flushes     int
}

func (w *ruleWalk) handle(ctx context.Context, f Finding) error {
	if w.prev.Type != 0 && key(w.prev) != key(f.id) {
		w.complete = w.prev // its findings are all queued or handled
	}
	w.prev = f.id
	if f.fix != nil && !w.dryRun {
		if err := w.pace.wait(ctx); err != nil {
			return err
		}
	}
	fx := f.fix
	if fx == nil || w.dryRun || fx.precheck != nil || fx.del || (len(w.pending) > 0 && w.pending[0].fix.coll != fx.coll) {
		if err := w.flush(ctx); err != nil {
			return err
		}
		if err := w.one(ctx, f); err != nil {
			return err
		}
		return w.maybeSave()
	}
	if h := w.c.hook(); h != nil {
		h("integrity.write "+f.Collection, 0, 0)
	}
	w.pending = append(w.pending, f)
	if len(w.pending) >= w.c.bulkSize(ctx) {
		return w.flush(ctx)
	}
	return nil
}

// one repairs f on its own.
func (w *ruleWalk) one(ctx context.Context, f Finding) error {
	f, out, err := w.c.repairOne(ctx, f, w.dryRun)
	if err != nil {
		return fmt.Errorf("repair %s of %s _id %s: %w", f.Path, f.Collection, f.ID, err)
	}
	w.record(f, out)
	return nil
}

func (w *ruleWalk) record(f Finding, out string) {
	switch out {
	case OutcomeFixed, OutcomeWouldFix:
		w.fixed++
	case OutcomeInLine:
	default:
		w.left++
	}
	w.t.add(Fix{Rule: f.Rule, Collection: f.Collection, ID: f.ID, Path: f.Path, Wrong: f.Stored, Right: rightOf(f), Outcome: out})
}

// flush writes the pending fixes in one bulk.
func (w *ruleWalk) flush(ctx context.Context) error {
	batch := w.pending
	w.pending = nil
	if len(batch) == 0 {
		return nil
	}
	if h := w.c.hook(); h != nil {
		h("integrity.flush "+batch[0].Collection, 0, w.flushes)
	}
	w.flushes++
	models := make([]mongo.WriteModel, len(batch))
	for i, f := range batch {
		models[i] = mongo.NewUpdateOneModel().SetFilter(f.fix.filter).SetUpdate(f.fix.update).SetUpsert(f.fix.upsert)
	}
	res, err := w.c.db.Collection(batch[0].fix.coll).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		return fmt.Errorf("repair %d values of %s (_id %s to %s): %w", len(batch), batch[0].Collection, batch[0].ID, batch[len(batch)-1].ID, err)
	}
	if res.MatchedCount+res.UpsertedCount == int64(len(batch)) {
		for _, f := range batch {
			w.record(f, OutcomeFixed)
		}
		return w.maybeSave()
	}
	// Some guard missed: which one is not in the reply. A document in line
	// now was fixed by the bulk (or, in the same instant, by another
	// writer); one still out of line is repaired on its own.
	for _, f := range batch {
		now, err := w.c.recheck(ctx, f)
		if err != nil {
			return fmt.Errorf("re-check %s of %s _id %s: %w", f.Path, f.Collection, f.ID, err)
		}
		if now == nil {
			w.record(f, OutcomeFixed)
			continue
		}
		if err := w.one(ctx, *now); err != nil {
			return err
		}
	}
	return w.maybeSave()
}

// maybeSave stores the progress, at most every saveEvery, when nothing is
// pending: every finding up to the last complete document is handled.
func (w *ruleWalk) maybeSave() error {
	if w.save == nil || len(w.pending) > 0 || w.complete.Type == 0 || w.r.info().Kind == KindCounter || time.Since(w.saved) < saveEvery {
		return nil
	}
	if err := w.save(w.complete, w.fixed); err != nil {
		return err
	}
	w.saved = time.Now()
	return nil
}

// bulkSize is how many fixes go in one bulk: a batch, or one on a server
// without guarded writes (FerretDB v1, the sandbox: it applies a bulk's
// updates each after a read of the collection, and a bulk there slows
// down with every one sent while the scan's cursor is open: 200 fixes of
// 2,000 documents took 78 s in bulks of 50, 13 s one by one).
func (c *Checker) bulkSize(ctx context.Context) int {
	c.bulkOnce.Do(func() {
		c.bulk = c.opts.BatchSize
		if info, err := probe.Server(ctx, c.db); err == nil && !probe.GuardedWrites(info).Available {
			c.bulk = 1
		}
	})
	return c.bulk
}
