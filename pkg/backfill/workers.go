package backfill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/gopanic"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A parallel backfill (Options.Workers > 1) of one collection:
//
//   - The plan: split points of the _id space (a sample of the _ids where
//     the server has $sample, else every k-th _id below the target; see
//     splitPoints), stored in the checkpoints' collection (internal/state) as "<coll>$plan$<target>".
//     It is inserted: the first planner wins and every other process reads
//     its plan, so all share the same ranges. Range i is [splits[i-1],
//     splits[i]), the first and last open-ended.
//   - Each range is claimed through a lease of the lock collection,
//     "backfill:<coll>:v<target>:range:<i>" (the lease code of the migration lock:
//     insert, heartbeat, fence before every write), never waited for: a
//     worker takes the next unclaimed, unfinished range, and sleeps only
//     when every unfinished range is held by someone else (a lease left by
//     a dead worker expires and is taken over).
//   - Each range walks with its own cursor (clientWalk bounded to the
//     range) and checkpoints "<coll>$range$<target>$<i>" (lastId, done).
//     A finished range is never walked again for that target. On FerretDB
//     the workers of one process take turns writing a batch
//     (Options.writeTurn): SQLite has one writer.
//   - When no range is left, the collection's own lease is taken and the
//     documents still below the target are counted: none, and that count
//     is the proof; some, and one ordinary (single) backfill sweeps what
//     the ranges did not upgrade (documents whose upgrade fails, old
//     writers' documents, _ids of another BSON type than the split points,
//     which $gte/$lt do not match) and computes the proof. Its failures are
//     the result's.
//   - A target whose ranges an earlier run walked (recorded done, or
//     removed after the proof) is not split again: what is below it now
//     (failures, old writers' documents) is swept by one worker, and the
//     result's RangesNote says so.
//   - Once a proof holds, the plan and range checkpoints of the collection
//     (of every target) are removed, after the proof is saved in the
//     collection's checkpoint: a worker that looks for ranges afterwards
//     finds the target proven and goes straight to the count, so a rerun
//     walks no range again (see state.Store.DropRanges). No worker is still
//     in a range then, unless one began it after the proof, which finds
//     nothing below the target left in it.

// rangePlan is the stored split of a collection's _id space.
type rangePlan struct {
	state.Plan
	// earlier: the plan was stored before this run looked (by an earlier
	// run, or a process that started first).
	earlier bool
}

func (p *rangePlan) ranges() int { return len(p.Splits) + 1 }

// bounds is the _id filter of range i.
func (p *rangePlan) bounds(i int) bson.D {
	var b bson.D
	if i > 0 {
		b = append(b, bson.E{Key: "$gte", Value: p.Splits[i-1]})
	}
	if i < len(p.Splits) {
		b = append(b, bson.E{Key: "$lt", Value: p.Splits[i]})
	}
	if len(b) == 0 {
		return nil
	}
	return bson.D{{Key: "_id", Value: b}}
}

// planUnderLease loads (or makes) the plan for target under the
// collection's backfill lease, after checking that the target is applied:
// a down reverting it holds that lease while it reads which range leases
// to take, so no plan appears that it does not exclude.
func (r *backfiller) planUnderLease(ctx context.Context, name string, target int64, opts Options) (plan *rangePlan, err error) {
	err = r.withLock(ctx, lease.Backfill(name), func(lctx context.Context) error {
		if err := r.stillApplied(lctx, name); err != nil {
			return err
		}
		plan, err = r.loadRangePlan(lctx, name, target, opts)
		return err
	})
	return plan, err
}

// loadRangePlan reads the plan for target, or makes and inserts one.
func (r *backfiller) loadRangePlan(ctx context.Context, name string, target int64, opts Options) (*rangePlan, error) {
	p, err := r.store.Plan(ctx, name, target)
	if err != nil {
		return nil, err
	}
	if p != nil {
		return &rangePlan{Plan: *p, earlier: true}, nil
	}
	splits, from, err := r.splitPoints(ctx, name, target, opts)
	if err != nil {
		return nil, err
	}
	p, earlier, err := r.store.StorePlan(ctx, name, target, splits, from)
	if err != nil {
		return nil, err
	}
	return &rangePlan{Plan: *p, earlier: earlier}, nil
}

// rangesDone reads which ranges of the plan are finished: all of them once
// the target is proven (their checkpoints may then be gone).
func (r *backfiller) rangesDone(ctx context.Context, name string, p *rangePlan) (map[int]bool, error) {
	if proven, err := r.targetProven(ctx, name, p.Target); err != nil || proven {
		done := map[int]bool{}
		for i := 0; i < p.ranges(); i++ {
			done[i] = true
		}
		return done, err
	}
	return r.store.RangesDone(ctx, name, p.Target, p.ranges())
}

// workerTally merges the ranges' counts.
type workerTally struct {
	mu                                  sync.Mutex
	upgraded, conflicts, batches, trips int64
	live                                int64 // upgraded so far, for progress
	// failed are the ranges' failures, reported by a run stopped before
	// the sweep (which otherwise walks and lists them again).
	failed  map[string]*FailureGroup
	stopped string
	err     error
}

// addFailures merges a range walk's failures into t's (t.mu held). A walk
// that lost its lease contributes what it met: the new holder resumes after
// the walk's last checkpoint, so it meets again only what came after it (a
// document counted twice only if this run walks that range again and stops
// before the sweep).
func (t *workerTally) addFailures(failed map[string]*FailureGroup) {
	if t.failed == nil {
		t.failed = map[string]*FailureGroup{}
	}
	for key, g := range failed {
		to := t.failed[key]
		if to == nil {
			t.failed[key] = &FailureGroup{Path: g.Path, Rule: g.Rule, Message: g.Message, Count: g.Count, ExampleIDs: g.ExampleIDs}
			continue
		}
		to.Count += g.Count
		to.ExampleIDs = append(to.ExampleIDs, g.ExampleIDs...)
		to.Trim()
	}
}

// backfillWorkers runs opts.Workers workers over the ranges of name, then
// the sweep and proof under the collection's lease.
func (r *backfiller) backfillWorkers(ctx context.Context, name string, opts Options, deadline time.Time, stopped *Stopped) (*CollectionResult, error) {
	start := time.Now()
	target := r.registry.Current(name)
	t := &workerTally{}
	// A proven target's ranges are all done (and their checkpoints
	// removed): only the sweep runs.
	proven, err := r.targetProven(ctx, name, target)
	if err != nil {
		return nil, err
	}
	if err := r.loadNonce(ctx, name, target); err != nil {
		return nil, err
	}
	var plan *rangePlan
	resumed := false // ranges planned, walked or begun by an earlier run
	if !proven {
		if plan, err = r.planUnderLease(ctx, name, target, opts); err != nil {
			return nil, err
		}
		resumed = plan.earlier
		done, err := r.rangesDone(ctx, name, plan)
		if err != nil {
			return nil, err
		}
		if len(done) == plan.ranges() {
			plan = nil // walked by an earlier run: only the sweep runs
		} else {
			r.runWorkers(ctx, name, plan, opts, deadline, start, t)
		}
	}
	if t.err == nil && t.stopped == "" && ctx.Err() != nil {
		t.stopped = "interrupted" // after the last range: no sweep
	}
	merge := func(cb *CollectionResult) *CollectionResult {
		if cb == nil {
			cb = &CollectionResult{Collection: name, Target: target}
		}
		cb.Upgraded += t.upgraded
		cb.Conflicts += t.conflicts
		cb.Batches += t.batches
		cb.RoundTrips += t.trips
		cb.DurationMS = time.Since(start).Milliseconds()
		cb.Resumed = cb.Resumed || resumed
		if plan != nil {
			cb.Ranges, cb.RangeSplit = plan.ranges(), plan.From
		} else if cb.Batches > 0 {
			cb.RangesNote = fmt.Sprintf("the ranges of version %d were walked by an earlier run; the documents still below it are swept by one worker", target)
		}
		return cb
	}
	if t.err != nil || t.stopped != "" {
		*stopped = Stopped(t.stopped)
		cb := merge(nil)
		cb.Failed = bsonx.FailureList(t.failed)
		// Every run's ranges, finished or not, and the collection's own
		// count (read even once ctx is cancelled: a stopped run reports).
		total, err := r.workersTotal(context.WithoutCancel(ctx), name, target)
		cb.TotalUpgraded = total
		return cb, errors.Join(t.err, err)
	}
	// Every range is done: sweep and prove, one process at a time.
	var cb *CollectionResult
	err = r.withLock(ctx, lease.Backfill(name), func(lctx context.Context) error {
		var err error
		cb, err = r.sweep(lctx, name, opts, deadline, stopped)
		return err
	})
	return merge(cb), err
}

// workersTotal is what the backfill of name to target upgraded in every
// run: the collection checkpoint's count and, until they are counted in
// it, its ranges' (see checkpoint.RangesCounted).
func (r *backfiller) workersTotal(ctx context.Context, name string, target int64) (int64, error) {
	cp, err := r.store.Read(ctx, name)
	if err != nil {
		return 0, err
	}
	if cp == nil || cp.Target != target {
		cp = &checkpoint{ID: name, Target: target}
	}
	if err := r.countRanges(ctx, cp); err != nil {
		return 0, err
	}
	return cp.Upgraded, nil
}

// countRanges adds to cp what the ranges of its target upgraded, in every
// run, unless cp counts them already; the caller saves cp.
func (r *backfiller) countRanges(ctx context.Context, cp *checkpoint) error {
	if cp.RangesCounted {
		return nil
	}
	n, err := r.store.RangesUpgraded(ctx, cp.ID, cp.Target)
	if err != nil {
		return err
	}
	cp.Upgraded += n
	cp.RangesCounted = true
	return nil
}

// sweep runs under the collection's lease once every range is done: it
// counts the documents still below the target and, only if some remain,
// walks the collection (an ordinary backfill) to upgrade them and prove;
// if none remain, the count is the proof. What the ranges upgraded, in
// every run, joins the total (once).
func (r *backfiller) sweep(ctx context.Context, name string, opts Options, deadline time.Time, stopped *Stopped) (*CollectionResult, error) {
	target := r.registry.Current(name)
	cp, _, err := r.store.Begin(ctx, name, target)
	if err != nil {
		return nil, err
	}
	left, err := r.db.Collection(name).CountDocuments(ctx, r.belowFilter(target), options.Count().SetLimit(1))
	if err != nil {
		return nil, fmt.Errorf("check %s for documents below version %d: %w", name, target, err)
	}
	// A walk starts from the start; the total counts the ranges.
	cp.LastID, cp.Done = nil, left == 0
	cp.Proven = cp.Proven || left == 0
	if err := r.countRanges(ctx, &cp); err != nil {
		return nil, err
	}
	if err := r.stillApplied(ctx, name); err != nil {
		return nil, err
	}
	if err := r.store.SaveProgress(ctx, &cp); err != nil {
		return nil, err
	}
	if left > 0 {
		return r.backfillCollection(ctx, name, opts, deadline, stopped)
	}
	cb := &CollectionResult{Collection: name, Target: target, TotalUpgraded: cp.Upgraded, Complete: true}
	return cb, r.prove(ctx, cb, &cp)
}

// runWorkers runs opts.Workers range workers over plan and waits for them.
func (r *backfiller) runWorkers(ctx context.Context, name string, plan *rangePlan, opts Options, deadline, start time.Time, t *workerTally) {
	var wg sync.WaitGroup
	for wi := 0; wi < opts.Workers; wi++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stop string
			var err error
			func() {
				defer gopanic.RecoverTo(&err, fmt.Sprintf("backfill worker %d of %s", wi+1, name))
				stop, err = r.rangeWorker(ctx, name, plan, wi, opts, deadline, start, t)
			}()
			t.mu.Lock()
			defer t.mu.Unlock()
			if err != nil && t.err == nil {
				t.err = err
			}
			if stop != "" && t.stopped == "" {
				t.stopped = stop
			}
		}()
	}
	wg.Wait()
}

// rangeWorker takes unfinished, unclaimed ranges one at a time until none
// is left, or ctx ends or the deadline passes.
func (r *backfiller) rangeWorker(ctx context.Context, name string, plan *rangePlan, wi int, opts Options, deadline, start time.Time, t *workerTally) (string, error) {
	n := plan.ranges()
	for {
		if ctx.Err() != nil {
			return "interrupted", nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return "deadline", nil
		}
		done, err := r.rangesDone(ctx, name, plan)
		if err != nil {
			return stoppedOr(ctx, err)
		}
		if len(done) == n {
			return "", nil
		}
		took := false
		// Workers start at different ranges so they rarely collide.
		for k := 0; k < n && !took; k++ {
			i := (k + wi*n/max(opts.Workers, 1)) % n
			if done[i] {
				continue
			}
			var stop string
			err := r.withLockWait(ctx, lease.BackfillRange(name, plan.Target, i), 0, func(lctx context.Context) error {
				took = true
				var err error
				stop, err = r.walkRange(lctx, name, plan, i, opts, deadline, start, t)
				return err
			})
			var held *lease.TimeoutError
			switch {
			case errors.As(err, &held):
				continue // another worker has it
			case errors.Is(err, lease.ErrLost):
				// Our lease on the range lapsed (a pause, a slow server) and
				// the fence stopped our writes: whoever took it over
				// resumes from its checkpoint; go on with the others.
				r.log.Log(events.RangeLeaseLost{Collection: name, Range: i, Err: err})
			case err != nil:
				return stoppedOr(ctx, fmt.Errorf("range %d of %s: %w", i, name, err))
			case stop != "":
				return stop, nil
			}
		}
		if !took {
			// Every unfinished range is held: wait for its holder to finish
			// it, or for its lease to expire.
			select {
			case <-ctx.Done():
			case <-time.After(min(r.leaseTime/4, 500*time.Millisecond)):
			}
		}
	}
}

// stoppedOr is a worker's end on err: "interrupted" if ctx ended meanwhile
// (Ctrl-C landing in a lease's acquisition or a read fails them with
// "context canceled"), else err.
func stoppedOr(ctx context.Context, err error) (string, error) {
	if ctx.Err() != nil {
		return "interrupted", nil
	}
	return "", err
}

// walkRange walks range i of plan under its lease (ctx carries it); start
// is when the run began (progress shows its rate).
func (r *backfiller) walkRange(ctx context.Context, name string, plan *rangePlan, i int, opts Options, deadline, start time.Time, t *workerTally) (string, error) {
	// Under the range's lease: a down reverting the target holds it
	// while it runs, so the target is still applied if it is now.
	if err := r.stillApplied(ctx, name); err != nil {
		return "", err
	}
	cp, err := r.store.Range(ctx, name, plan.Target, i)
	if err != nil {
		return "", err
	}
	if cp.Done {
		return "", nil // finished by another worker since we looked
	}
	saved := time.Now()
	save := r.saveFunc(ctx, name, &saved, func(wctx context.Context) error { return r.store.SaveRange(wctx, &cp) })
	wopts := opts
	if opts.Rate > 0 {
		wopts.Rate = opts.Rate / float64(opts.Workers)
	}
	if opts.progress != nil {
		var last int64
		wopts.progress = func(p events.BackfillBatch) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.live += p.Upgraded - last
			last = p.Upgraded
			p.Upgraded, p.Total, p.Remaining, p.Elapsed = t.live, t.live, -1, time.Since(start)
			opts.progress(p)
		}
	}
	cb := &CollectionResult{Collection: name, Target: plan.Target}
	w := &clientWalk{r: r, coll: r.db.Collection(name), name: name, opts: wopts, deadline: deadline, start: time.Now(), cb: cb, cp: &cp,
		save: save, saved: &saved, failed: map[string]*FailureGroup{}, idOnly: opts.AssumeNoWriters, remaining: -1, bounds: plan.bounds(i)}
	stop, err := w.run(ctx)
	t.mu.Lock()
	t.upgraded += cb.Upgraded
	t.conflicts += cb.Conflicts
	t.batches += cb.Batches
	t.trips += cb.RoundTrips
	t.addFailures(w.failed)
	t.mu.Unlock()
	if err != nil {
		return "", err
	}
	if stop != "" && errors.Is(context.Cause(ctx), lease.ErrLost) {
		// The walk stopped because the range lease was lost, not because
		// the run was stopped: save nothing (the new holder owns the
		// checkpoint) and let the worker go on with other ranges.
		return "", lease.ErrLost
	}
	if stop != "" {
		return stop, save()
	}
	// Record the range done only while the lease is still ours.
	if err := lease.Fence(ctx); err != nil {
		return "", err
	}
	cp.Done = true
	return "", save()
}
