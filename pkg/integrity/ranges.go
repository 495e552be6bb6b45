package integrity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/gopanic"
	"github.com/mongomig/mongomig/internal/idsplit"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/lease"
)

// A repair with Options.Leases splits each pass's work (pass.go: the
// rules of one collection, walked together; "<rule>" below is the name of
// its last rule) into _id ranges of the collection, the way a parallel
// backfill does, so repairs in
// several processes (and Options.Workers workers in each) share it:
//
//   - The plan of a pass: split points of its collection's _ids
//     (internal/idsplit: quantiles of a $sample, or every k-th _id where
//     the server has no $sample), about 4 ranges per worker and none
//     smaller than a batch (one range when the planner has one worker), stored as "$repair$<rule>$plan$1" in
//     mongomig_backfill under the repair's database lease
//     ([RepairLease], held only while planning): the first planner wins,
//     every other process reads its plan. The split points keep one type
//     class (that of the first), so the ranges are disjoint: range 0 is
//     every _id not at or above the first split point (which includes the
//     _ids of other types), range i [splits[i-1], splits[i]), the last
//     open above. A counter is one range.
//   - Each range is taken through its own lease ([RepairRangeLease]),
//     never waited for: a worker takes the next unfinished range no one
//     holds, and sleeps only when every unfinished range is held; a lease
//     left by a killed process expires and is taken over. Two processes
//     never walk one range at once, so never fix the same document.
//   - A range walks in _id order and checkpoints "$repair$<rule>$range$1$<i>"
//     (the _id up to which every finding was handled, the fixes, done),
//     fenced by the range's lease: a range taken over goes on after its
//     last checkpoint.
//   - The processes go through the passes in the same order, a pass once
//     all its ranges are done. The one that finds every pass done removes
//     the plans and checkpoints, under the database lease, so the next
//     repair starts over.

// RepairRangeLease is the name of the lease of range i of rule's repair
// of database db.
func RepairRangeLease(db, rule string, i int) string {
	return fmt.Sprintf("%s:%s:range:%d", RepairLease(db), rule, i)
}

// repairGeneration is the plan's target in internal/state: a repair's
// plans are removed when it finishes, so one generation is stored at once.
const repairGeneration = 1

// rangesPerWorker is how many ranges a rule is split into per worker.
const rangesPerWorker = 4

// splitSamplesPerRange: the $sample size per range (as a backfill's).
const splitSamplesPerRange = 32

func planName(p *pass) string { return state.RepairKey(p.name()) }

// repairRanged repairs every pass range by range (see above). notRun is
// set when the database lease was never acquired: nothing ran.
func (c *Checker) repairRanged(ctx context.Context, t *tally) (notRun bool, err error) {
	store := state.New(c.db)
	pace := &pacer{rate: c.opts.Rate}
	for i, r := range c.passes {
		p, err := c.rulePlan(ctx, store, r)
		if err != nil {
			return i == 0 && p == nil && errors.Is(err, lease.ErrTimeout), err
		}
		if p.earlier {
			t.setResumed()
		}
		if err := c.repairRanges(ctx, store, r, p, t, pace); err != nil {
			return false, err
		}
	}
	return false, c.forget(ctx, store)
}

// errPlanGone: a rule's plan was removed while a worker looked for a
// range, by a process that found every range done.
var errPlanGone = errors.New("the repair's plan was removed: every range is done")

// forget removes the plans and checkpoints once every stored plan's
// ranges are done, holding the database's lease and every range's (a
// worker checks, under its range's lease, that the plan still exists, so
// none records a range of a removed plan). A range held by a worker
// still looking at it, or not done, leaves them: that worker's process
// forgets them when it finishes. A plan missing was forgotten already
// (another process may be walking a new one: its plans are forgotten by
// whoever finishes it).
func (c *Checker) forget(ctx context.Context, store *state.Store) error {
	return lease.With(ctx, c.opts.Leases, RepairLease(c.db.Name()), c.opts.LeaseWait, func(lctx context.Context) error {
		var held []lease.Locker
		defer func() {
			for _, l := range held {
				_ = l.Release(context.WithoutCancel(ctx))
			}
		}()
		for _, r := range c.passes {
			p, err := store.Plan(lctx, planName(r), repairGeneration)
			if err != nil || p == nil {
				if err != nil {
					return err
				}
				continue
			}
			n := len(p.Splits) + 1
			if done, err := store.RangesDone(lctx, planName(r), repairGeneration, n); err != nil || len(done) < n {
				return err
			}
			for i := range n {
				l, err := c.opts.Leases.Acquire(lctx, RepairRangeLease(c.db.Name(), r.name(), i), forgetWait)
				if errors.Is(err, lease.ErrTimeout) {
					return nil
				}
				if err != nil {
					return err
				}
				held = append(held, l)
			}
		}
		return store.ForgetRepair(lctx)
	})
}

// forgetWait is how long forget waits for a range lease a worker holds
// while it sees the range done.
const forgetWait = 2 * time.Second

// repairPlan is one rule's stored split.
type repairPlan struct {
	splits  bson.A
	earlier bool // stored before this process looked
}

func (p *repairPlan) ranges() int { return len(p.splits) + 1 }

// bounds is the _id filter of range i (empty: the whole collection).
func (p *repairPlan) bounds(i int) bson.D {
	n := len(p.splits)
	switch {
	case n == 0:
		return bson.D{}
	case i == 0:
		return bson.D{{Key: "_id", Value: bson.D{{Key: "$not", Value: bson.D{{Key: "$gte", Value: p.splits[0]}}}}}}
	case i == n:
		return bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: p.splits[n-1]}}}}
	}
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: p.splits[i-1]}, {Key: "$lt", Value: p.splits[i]}}}}
}

// rulePlan reads (or makes and stores) r's plan under the database lease.
func (c *Checker) rulePlan(ctx context.Context, store *state.Store, r *pass) (*repairPlan, error) {
	var out *repairPlan
	err := lease.With(ctx, c.opts.Leases, RepairLease(c.db.Name()), c.opts.LeaseWait, func(lctx context.Context) error {
		p, err := store.Plan(lctx, planName(r), repairGeneration)
		if err != nil {
			return err
		}
		if p != nil {
			out = &repairPlan{splits: p.Splits, earlier: true}
			return nil
		}
		splits, from, err := c.splitPoints(lctx, r)
		if err != nil {
			return err
		}
		// Range checkpoints without a plan were left by a removal that was
		// cut: none is this new plan's.
		if err := store.DropRepairRanges(lctx, planName(r), repairGeneration); err != nil {
			return err
		}
		p, earlier, err := store.StorePlan(lctx, planName(r), repairGeneration, splits, from)
		if err != nil {
			return err
		}
		out = &repairPlan{splits: p.Splits, earlier: earlier}
		return nil
	})
	return out, err
}

// splitPoints splits r's collection into about rangesPerWorker ranges per
// worker, each at least a batch, keeping the split points of one type
// class.
func (c *Checker) splitPoints(ctx context.Context, r *pass) (bson.A, string, error) {
	if r.counter() {
		return bson.A{}, "one range: a counter", nil
	}
	if c.opts.Workers <= 1 {
		// One worker walks the rule whole: a range costs a scan of the
		// collection on a server that does not bound an _id range by the
		// index (FerretDB), and one process gains nothing from splitting.
		return bson.A{}, "one range: one worker", nil
	}
	coll := c.db.Collection(r.coll())
	est, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("estimate the size of %s: %w", coll.Name(), err)
	}
	per := max(int64(c.opts.BatchSize), est/int64(max(c.opts.Workers, 1)*rangesPerWorker), 1)
	if est <= per {
		return bson.A{}, fmt.Sprintf("one range: about %d documents", est), nil
	}
	ranges := (est + per - 1) / per
	splits, err := idsplit.Sampled(ctx, coll, ranges, splitSamplesPerRange)
	from := "quantiles of a $sample of the _ids"
	if notSupported(err) {
		splits, err = idsplit.Scanned(ctx, coll, bson.D{}, per)
		from = "every _id, read in order (the server has no $sample)"
	}
	if err != nil {
		return nil, "", fmt.Errorf("split the _ids of %s: %w", coll.Name(), err)
	}
	return oneClass(splits), from, nil
}

// oneClass keeps the split points of the first one's type class.
func oneClass(splits bson.A) bson.A {
	out := bson.A{}
	for _, s := range splits {
		v, ok := s.(bson.RawValue)
		if ok && (len(out) == 0 || typeClass(v.Type) == typeClass(out[0].(bson.RawValue).Type)) {
			out = append(out, v)
		}
	}
	return out
}

// repairRanges runs the workers over r's ranges until all are done.
func (c *Checker) repairRanges(ctx context.Context, store *state.Store, r *pass, p *repairPlan, t *tally, pace *pacer) error {
	workers := max(c.opts.Workers, 1)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	total := counts{}
	var mu sync.Mutex
	skipped := true
	for wi := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer gopanic.RecoverTo(&errs[wi], fmt.Sprintf("repair worker %d of %s", wi+1, r))
			errs[wi] = c.rangeWorker(ctx, store, r, p, wi, t, pace, func(n counts) {
				mu.Lock()
				defer mu.Unlock()
				for k, v := range n {
					got := total[k]
					total[k] = [2]int64{got[0] + v[0], got[1] + v[1]}
				}
				skipped = false
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if skipped {
		n, err := store.RangesUpgraded(ctx, planName(r), repairGeneration)
		if err != nil {
			return err
		}
		t.setResumed()
		c.passSkipped(r, n)
		return nil
	}
	c.passProgress(r, total, 0)
	return nil
}

// rangeWorker takes unfinished ranges no one holds, one at a time, until
// every range is done; walked is told each range's counts.
func (c *Checker) rangeWorker(ctx context.Context, store *state.Store, r *pass, p *repairPlan, wi int, t *tally, pace *pacer, walked func(counts)) error {
	n := p.ranges()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := store.RangesDone(ctx, planName(r), repairGeneration, n)
		if err != nil || len(done) == n {
			return err
		}
		took := false
		for k := 0; k < n && !took; k++ {
			i := (k + wi*n/max(c.opts.Workers, 1)) % n
			if done[i] {
				continue
			}
			l, err := c.opts.Leases.Acquire(ctx, RepairRangeLease(c.db.Name(), r.name(), i), 0)
			if errors.Is(err, lease.ErrTimeout) {
				continue // another worker has it
			}
			if err != nil {
				return err
			}
			took = true
			err = lease.Hold(ctx, l, func(lctx context.Context) error {
				return c.walkRange(lctx, store, r, p, i, t, pace, walked)
			})
			if errors.Is(err, errPlanGone) {
				return nil
			}
			if err != nil && !(errors.Is(err, lease.ErrLost) && ctx.Err() == nil) {
				return fmt.Errorf("range %d of %s: %w", i, r, err)
			}
			// A lost lease: whoever took the range over goes on from its
			// checkpoint; this worker goes on with the others.
		}
		if !took {
			select { // every unfinished range is held: wait for it, or its expiry
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// walkRange repairs range i of r under its lease (ctx carries it).
func (c *Checker) walkRange(ctx context.Context, store *state.Store, r *pass, p *repairPlan, i int, t *tally, pace *pacer, walked func(counts)) error {
	if plan, err := store.Plan(ctx, planName(r), repairGeneration); err != nil || plan == nil {
		if err == nil {
			err = errPlanGone
		}
		return err
	}
	cp, err := store.Range(ctx, planName(r), repairGeneration, i)
	if err != nil || cp.Done {
		return err // done by another worker since we looked
	}
	filter := p.bounds(i)
	if cp.LastID != nil && !r.counter() {
		t.setResumed()
		filter = and(filter, after(cp.LastID))
	}
	save := func(last bson.RawValue, fixed int64) error {
		cp.LastID, cp.Upgraded = last, fixed
		return store.SaveRange(ctx, &cp)
	}
	from := cp.Upgraded
	w, err := c.repairPass(ctx, r, filter, t, false, pace, from, save)
	fixed := w.fixed
	walked(w.counts())
	if err != nil {
		return err
	}
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	cp.Upgraded, cp.Done = fixed, true
	return store.SaveRange(ctx, &cp)
}

func and(a, b bson.D) bson.D {
	if len(a) == 0 {
		return b
	}
	return bson.D{{Key: "$and", Value: bson.A{a, b}}}
}

// typeOrder is the order of the type classes an _id can have in MongoDB's
// comparison order (src/mongo/bson/bsontypes.cpp, canonicalizeBSONType):
// an _id above last is one above it in its class or of a later class.
var typeOrder = []string{"null", "number", "string", "object", "binData", "objectId", "bool", "date", "timestamp", "regex"}

// after matches the _ids that sort after last: $gt compares within a
// type class only, so the later classes are added by $type.
func after(last any) bson.D {
	gt := bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: last}}}}
	t, _, err := bson.MarshalValue(last)
	if err != nil {
		return gt
	}
	class := typeClass(t)
	switch t {
	case bson.TypeString, bson.TypeSymbol:
		class = "string"
	case bson.TypeEmbeddedDocument:
		class = "object"
	case bson.TypeBinary:
		class = "binData"
	case bson.TypeObjectID:
		class = "objectId"
	case bson.TypeBoolean:
		class = "bool"
	case bson.TypeDateTime:
		class = "date"
	case bson.TypeNull:
		class = "null"
	case bson.TypeTimestamp:
		class = "timestamp"
	}
	for i, name := range typeOrder {
		if name == class && i+1 < len(typeOrder) {
			later := bson.A{}
			for _, n := range typeOrder[i+1:] {
				later = append(later, n)
			}
			return bson.D{{Key: "$or", Value: bson.A{gt, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: later}}}}}}}
		}
	}
	return gt
}
