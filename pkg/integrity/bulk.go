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

// passWalk is one pass's repair as its scan emits the findings. The
// guarded updates of a batch go in one unordered bulk write (a batch:
// Options.BatchSize fixes, or fewer when the progress is saved; a pass of
// several rules writes one bulk per batch it read): when every guard
// matched, each is fixed; when some missed (a concurrent write), every
// document of the bulk is re-checked for every rule of the pass, and a
// value still (or now) out of line is repaired on its own (re-checked on
// each miss, as before). A fix that needs a look-up first (a dangling
// reference) or deletes is sent on its own.
type passWalk struct {
	c           *Checker
	p           *pass
	t           *tally
	dryRun      bool
	pace        *pacer
	fixed, left int64
	// byRule counts this walk's fixed and left per rule.
	byRule   map[string]*[2]int64
	save     func(last bson.RawValue, fixed int64) error
	saved    time.Time
	prev     bson.RawValue
	complete bson.RawValue // the last document whose every finding is queued or handled
	// handled: the findings of prev handled already (a re-check after a
	// missed guard handles those of the rules the scan has yet to emit).
	handled map[string]bool
	pending []Finding
	// unverified: copies written whose sources are to be read again
	// (sources.go); the progress is saved only once they are.
	unverified []Finding
	flushes    int
	// gone: the key of the last document this walk deleted (a dangling
	// reference's rule), whose findings of later rules are not fixes.
	gone string
}

func (w *passWalk) handle(ctx context.Context, f Finding) error {
	if w.prev.Type != 0 && key(w.prev) != key(f.id) {
		w.complete = w.prev // its findings are all queued or handled
		clear(w.handled)
	}
	w.prev = f.id
	if w.handled[findingKey(f)] || w.gone != "" && w.gone == key(f.id) {
		return nil // handled by a re-check, or in a document this walk deleted
	}
	w.mark(f)
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

// mark notes f handled, when it is a finding of the document the scan is
// at.
func (w *passWalk) mark(f Finding) {
	if w.prev.Type != 0 && key(w.prev) == key(f.id) {
		if w.handled == nil {
			w.handled = map[string]bool{}
		}
		w.handled[findingKey(f)] = true
	}
}

// batchEnd writes the batch's fixes: every finding up to last is handled.
func (w *passWalk) batchEnd(ctx context.Context, last bson.RawValue) error {
	if err := w.flush(ctx); err != nil {
		return err
	}
	w.prev, w.complete = bson.RawValue{}, last
	clear(w.handled)
	return w.maybeSave()
}

// one repairs f on its own.
func (w *passWalk) one(ctx context.Context, f Finding) error {
	f, out, err := w.c.repairOne(ctx, f, w.dryRun)
	if err != nil {
		return fmt.Errorf("repair %s of %s _id %s: %w", f.Path, f.Collection, f.ID, err)
	}
	if out == OutcomeFixed && f.fix != nil && f.fix.del {
		w.gone = key(f.id) // its other findings (they follow) are moot
	}
	w.record(f, out)
	return nil
}

func (w *passWalk) record(f Finding, out string) {
	if w.byRule == nil {
		w.byRule = map[string]*[2]int64{}
	}
	n := w.byRule[f.Rule]
	if n == nil {
		n = &[2]int64{}
		w.byRule[f.Rule] = n
	}
	switch out {
	case OutcomeFixed, OutcomeWouldFix:
		w.fixed++
		n[0]++
	case OutcomeInLine:
	default:
		w.left++
		n[1]++
	}
	w.t.add(Fix{Rule: f.Rule, Collection: f.Collection, ID: f.ID, Path: f.Path, Wrong: f.Stored, Right: rightOf(f), Outcome: out})
}

// flush writes the pending fixes in one bulk.
func (w *passWalk) flush(ctx context.Context) error {
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
		filter, err := w.c.exactFilter(ctx, f.fix.filter)
		if err != nil {
			return err
		}
		models[i] = mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(f.fix.update).SetUpsert(f.fix.upsert)
	}
	res, err := w.c.db.Collection(batch[0].fix.coll).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		values := "values"
		if len(batch) == 1 {
			values = "value"
		}
		return fmt.Errorf("repair %d %s of %s (_id %s to %s): %w", len(batch), values, batch[0].Collection, batch[0].ID, batch[len(batch)-1].ID, err)
	}
	if res.MatchedCount+res.UpsertedCount == int64(len(batch)) {
		for _, f := range batch {
			w.record(f, OutcomeFixed)
			if f.fix.source != nil {
				w.unverified = append(w.unverified, f)
			}
		}
		if len(w.p.rules) == 1 && len(w.unverified) >= w.c.opts.BatchSize {
			if err := w.verify(ctx); err != nil {
				return err
			}
		}
		return w.maybeSave()
	}
	if err := w.missed(ctx, batch, res.MatchedCount+res.UpsertedCount); err != nil {
		return err
	}
	return w.maybeSave()
}

// missed handles a bulk some guard of which missed (which one is not in
// the reply, only how many matched): each of its documents is re-checked
// for every rule of the pass. A value still out of line is repaired on
// its own, and so is one the concurrent write put out of line for another
// rule of the pass (which read the document before that write). A value
// in line now was fixed by the bulk or by another writer (another repair
// that took the range over, an application): as many of them as the
// bulk's writes matched are counted fixed, the others in line now (exact
// when none matched or all the values in line now were the bulk's).
func (w *passWalk) missed(ctx context.Context, batch []Finding, matched int64) error {
	type doc struct {
		from, to int
		now      []Finding
		byKey    map[string]int
	}
	var docs []doc
	for i := 0; i < len(batch); {
		j := i
		for j < len(batch) && key(batch[j].id) == key(batch[i].id) {
			j++
		}
		now, err := w.p.rescan(ctx, w.c, batch[i].id)
		if err != nil {
			return fmt.Errorf("re-check %s _id %s: %w", batch[i].Collection, batch[i].ID, err)
		}
		d := doc{from: i, to: j, now: now, byKey: map[string]int{}}
		for k, g := range now {
			if _, dup := d.byKey[findingKey(g)]; !dup {
				d.byKey[findingKey(g)] = k
			}
		}
		docs = append(docs, d)
		i = j
	}
	var inLine int64
	for _, d := range docs {
		used := make([]bool, len(d.now))
		for _, f := range batch[d.from:d.to] {
			k, ok := d.byKey[findingKey(f)]
			if !ok || used[k] {
				if inLine < matched {
					w.record(f, OutcomeFixed)
				} else {
					w.record(f, OutcomeInLine)
				}
				inLine++
				continue
			}
			used[k] = true
			if err := w.one(ctx, d.now[k]); err != nil {
				return err
			}
		}
		for k, g := range d.now {
			if used[k] || g.fix == nil || g.fix.precheck != nil || g.fix.del || key(w.prev) == key(g.id) && w.handled[findingKey(g)] {
				continue
			}
			w.mark(g)
			if err := w.one(ctx, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// maybeSave stores the progress, at most every saveEvery, when nothing is
// pending: every finding up to the last complete document is handled.
func (w *passWalk) maybeSave() error {
	if w.save == nil || len(w.pending) > 0 || len(w.unverified) > 0 || w.complete.Type == 0 || w.p.counter() || time.Since(w.saved) < saveEvery {
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

// verify re-reads the sources of the copies written and not yet verified
// (one $in per source collection, a batch's at once), and re-checks each
// document whose copy's source changed since it was fetched
// (sources.go): a value still out of line is repaired on its own.
func (w *passWalk) verify(ctx context.Context) error {
	batch := w.unverified
	w.unverified = nil
	if len(batch) == 0 {
		return nil
	}
	fixes := make([]*fix, len(batch))
	for i, f := range batch {
		fixes[i] = f.fix
	}
	moved, err := w.c.sourcesMoved(ctx, fixes)
	if err != nil {
		return fmt.Errorf("re-read the sources of %d copies of %s: %w", len(batch), batch[0].Collection, err)
	}
	return w.moved(ctx, batch, moved)
}

// carrier hands the copies written to the next batch's $in (a pass of
// several rules: pass.scan); their sources read, the progress up to the
// last batch is saved.
func (w *passWalk) carrier(ctx context.Context) *carrier {
	var batch []Finding
	return &carrier{
		fixes: func() []*fix {
			batch, w.unverified = w.unverified, nil
			out := make([]*fix, len(batch))
			for i, f := range batch {
				out[i] = f.fix
			}
			return out
		},
		moved: func(moved []bool) error {
			if err := w.moved(ctx, batch, moved); err != nil {
				return err
			}
			return w.maybeSave()
		},
	}
}

// moved re-checks each document of batch whose copy's source moved.
func (w *passWalk) moved(ctx context.Context, batch []Finding, moved []bool) error {
	for i, f := range batch {
		if !moved[i] {
			continue
		}
		now, err := w.c.recheck(ctx, f)
		if err != nil {
			return fmt.Errorf("re-check %s _id %s: %w", f.Collection, f.ID, err)
		}
		if now != nil {
			if err := w.one(ctx, *now); err != nil {
				return err
			}
		}
	}
	return nil
}
