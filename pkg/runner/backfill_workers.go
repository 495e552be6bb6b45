package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/gopanic"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A parallel backfill (BackfillOptions.Workers > 1) of one collection:
//
//   - The plan: split points of the _id space (a sample of the _ids where
//     the server has $sample, else every k-th _id below the target; see
//     splitPoints), stored in BackfillCollection as "<coll>$plan$<target>".
//     It is inserted: the first planner wins and every other process reads
//     its plan, so all share the same ranges. Range i is [splits[i-1],
//     splits[i]), the first and last open-ended.
//   - Each range is claimed through a lease of the lock collection,
//     "backfill:<coll>:range:<i>" (the lease code of the migration lock:
//     insert, heartbeat, fence before every write), never waited for: a
//     worker takes the next unclaimed, unfinished range, and sleeps only
//     when every unfinished range is held by someone else (a lease left by
//     a dead worker expires and is taken over).
//   - Each range walks with its own cursor (clientWalk bounded to the
//     range) and checkpoints "<coll>$range$<target>$<i>" (lastId, done).
//     A finished range is never walked again for that target. On FerretDB
//     the workers of one process take turns writing a batch
//     (BackfillOptions.writeTurn): SQLite has one writer.
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
//     walks no range again (see dropRangeCheckpoints). No worker is still
//     in a range then, unless one began it after the proof, which finds
//     nothing below the target left in it.

// EventBackfillRangeLost: a worker lost the lease of the range it walked
// and goes on with the others; Message names the range and the loss.
const EventBackfillRangeLost EventKind = "backfill.rangeLeaseLost"

func rangePlanKey(coll string, target int64) string { return fmt.Sprintf("%s$plan$%d", coll, target) }
func rangeKey(coll string, target int64, i int) string {
	return fmt.Sprintf("%s$range$%d$%d", coll, target, i)
}
func rangeLeaseID(coll string, i int) string { return fmt.Sprintf("backfill:%s:range:%d", coll, i) }

// rangePlan is the stored split of a collection's _id space.
type rangePlan struct {
	ID     string `bson:"_id"`
	Target int64  `bson:"target"`
	Splits bson.A `bson:"splits"`
	// From says where the split points came from.
	From      string    `bson:"from"`
	CreatedAt time.Time `bson:"createdAt"`
	// earlier: the plan was stored before this run looked (by an earlier
	// run, or a process that started first); not stored.
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

// loadRangePlan reads the plan for target, or makes and inserts one.
func (r *Runner) loadRangePlan(ctx context.Context, name string, target int64, opts BackfillOptions) (*rangePlan, error) {
	cps := r.db.Collection(BackfillCollection)
	key := rangePlanKey(name, target)
	var p rangePlan
	err := cps.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&p)
	if err == nil {
		p.earlier = true
		return &p, nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("read the backfill plan of %s: %w", name, err)
	}
	splits, from, err := r.splitPoints(ctx, name, target, opts)
	if err != nil {
		return nil, err
	}
	p = rangePlan{ID: key, Target: target, Splits: splits, From: from, CreatedAt: time.Now()}
	if _, err := cps.InsertOne(ctx, p); err != nil {
		if !mongo.IsDuplicateKeyError(err) {
			return nil, fmt.Errorf("store the backfill plan of %s: %w", name, err)
		}
		// Another process planned first: share its ranges.
		if err := cps.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&p); err != nil {
			return nil, fmt.Errorf("read the backfill plan of %s: %w", name, err)
		}
	}
	return &p, nil
}

// rangesDone reads which ranges of the plan are finished: all of them once
// the target is proven (their checkpoints may then be gone).
func (r *Runner) rangesDone(ctx context.Context, name string, p *rangePlan) (map[int]bool, error) {
	done := map[int]bool{}
	if proven, err := r.targetProven(ctx, name, p.Target); err != nil || proven {
		for i := 0; i < p.ranges(); i++ {
			done[i] = true
		}
		return done, err
	}
	keys := bson.A{}
	byKey := map[string]int{}
	for i := 0; i < p.ranges(); i++ {
		k := rangeKey(name, p.Target, i)
		keys = append(keys, k)
		byKey[k] = i
	}
	cur, err := r.db.Collection(BackfillCollection).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: "done", Value: true}})
	if err != nil {
		return nil, fmt.Errorf("read the backfill ranges of %s: %w", name, err)
	}
	var cps []checkpoint
	if err := cur.All(ctx, &cps); err != nil {
		return nil, fmt.Errorf("read the backfill ranges of %s: %w", name, err)
	}
	for _, c := range cps {
		done[byKey[c.Collection]] = true
	}
	return done, nil
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
func (r *Runner) backfillWorkers(ctx context.Context, name string, opts BackfillOptions, deadline time.Time, stopped *string) (*CollectionBackfill, error) {
	start := time.Now()
	target := r.registry.Current(name)
	t := &workerTally{}
	// A proven target's ranges are all done (and their checkpoints
	// removed): only the sweep runs.
	proven, err := r.targetProven(ctx, name, target)
	if err != nil {
		return nil, err
	}
	var plan *rangePlan
	resumed := false // ranges planned, walked or begun by an earlier run
	if !proven {
		if plan, err = r.loadRangePlan(ctx, name, target, opts); err != nil {
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
	merge := func(cb *CollectionBackfill) *CollectionBackfill {
		if cb == nil {
			cb = &CollectionBackfill{Collection: name, Target: target}
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
		*stopped = t.stopped
		cb := merge(nil)
		cb.Failed = bsonx.FailureList(t.failed)
		// Every run's ranges, finished or not, and the collection's own
		// count (read even once ctx is cancelled: a stopped run reports).
		total, err := r.workersTotal(context.WithoutCancel(ctx), name, target)
		cb.TotalUpgraded = total
		return cb, errors.Join(t.err, err)
	}
	// Every range is done: sweep and prove, one process at a time.
	var cb *CollectionBackfill
	err = r.withLock(ctx, backfillLockID(name), func(lctx context.Context) error {
		var err error
		cb, err = r.sweep(lctx, name, opts, deadline, stopped)
		return err
	})
	return merge(cb), err
}

// workersTotal is what the backfill of name to target upgraded in every
// run: the collection checkpoint's count and, until they are counted in
// it, its ranges' (see checkpoint.RangesCounted).
func (r *Runner) workersTotal(ctx context.Context, name string, target int64) (int64, error) {
	cp, _, err := loadCheckpoint(ctx, r.db.Collection(BackfillCollection), name, target)
	if err != nil {
		return 0, err
	}
	if err := r.countRanges(ctx, &cp); err != nil {
		return 0, err
	}
	return cp.Upgraded, nil
}

// countRanges adds to cp what the ranges of its target upgraded, in every
// run, unless cp counts them already; the caller saves cp.
func (r *Runner) countRanges(ctx context.Context, cp *checkpoint) error {
	if cp.RangesCounted {
		return nil
	}
	prefix := "^" + regexp.QuoteMeta(fmt.Sprintf("%s$range$%d$", cp.Collection, cp.Target))
	cur, err := r.db.Collection(BackfillCollection).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: prefix}}}},
		options.Find().SetProjection(bson.D{{Key: "upgraded", Value: 1}}))
	if err != nil {
		return fmt.Errorf("read the backfill ranges of %s: %w", cp.Collection, err)
	}
	var ranges []checkpoint
	if err := cur.All(ctx, &ranges); err != nil {
		return fmt.Errorf("read the backfill ranges of %s: %w", cp.Collection, err)
	}
	for _, rc := range ranges {
		cp.Upgraded += rc.Upgraded
	}
	cp.RangesCounted = true
	return nil
}

// sweep runs under the collection's lease once every range is done: it
// counts the documents still below the target and, only if some remain,
// walks the collection (an ordinary backfill) to upgrade them and prove;
// if none remain, the count is the proof. What the ranges upgraded, in
// every run, joins the total (once).
func (r *Runner) sweep(ctx context.Context, name string, opts BackfillOptions, deadline time.Time, stopped *string) (*CollectionBackfill, error) {
	target := r.registry.Current(name)
	cps := r.db.Collection(BackfillCollection)
	cp, _, err := loadCheckpoint(ctx, cps, name, target)
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
	cp.UpdatedAt = time.Now()
	if err := fence(ctx); err != nil {
		return nil, err
	}
	if _, err := cps.ReplaceOne(ctx, bson.D{{Key: "_id", Value: name}}, cp, options.Replace().SetUpsert(true)); err != nil {
		return nil, fmt.Errorf("save backfill checkpoint of %s: %w", name, err)
	}
	if left > 0 {
		return r.backfillCollection(ctx, name, opts, deadline, stopped)
	}
	cb := &CollectionBackfill{Collection: name, Target: target, TotalUpgraded: cp.Upgraded, Complete: true, Proven: true}
	return cb, r.dropRangeCheckpoints(ctx, name)
}

// runWorkers runs opts.Workers range workers over plan and waits for them.
func (r *Runner) runWorkers(ctx context.Context, name string, plan *rangePlan, opts BackfillOptions, deadline, start time.Time, t *workerTally) {
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
func (r *Runner) rangeWorker(ctx context.Context, name string, plan *rangePlan, wi int, opts BackfillOptions, deadline, start time.Time, t *workerTally) (string, error) {
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
			err := r.withLockWait(ctx, rangeLeaseID(name, i), 0, func(lctx context.Context) error {
				took = true
				var err error
				stop, err = r.walkRange(lctx, name, plan, i, opts, deadline, start, t)
				return err
			})
			var held *LockTimeoutError
			switch {
			case errors.As(err, &held):
				continue // another worker has it
			case errors.Is(err, ErrLockLost):
				// Our lease on the range lapsed (a pause, a slow server) and
				// the fence stopped our writes: whoever took it over
				// resumes from its checkpoint; go on with the others.
				r.cfg.events(Event{Kind: EventBackfillRangeLost, Collection: name, Message: fmt.Sprintf(
					"backfill of %s: range %d: %v; this worker wrote nothing more in it and goes on with the other ranges; whoever takes the range next resumes from its checkpoint", name, i, err)})
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
			case <-time.After(min(r.cfg.lease/4, 500*time.Millisecond)):
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
func (r *Runner) walkRange(ctx context.Context, name string, plan *rangePlan, i int, opts BackfillOptions, deadline, start time.Time, t *workerTally) (string, error) {
	cps := r.db.Collection(BackfillCollection)
	key := rangeKey(name, plan.Target, i)
	cp := checkpoint{Collection: key, Target: plan.Target}
	if err := cps.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&cp); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return "", fmt.Errorf("read backfill range %d of %s: %w", i, name, err)
	}
	if cp.Done {
		return "", nil // finished by another worker since we looked
	}
	saved := time.Now()
	save := func() error {
		// Only while the range's lease is ours: the new holder owns the
		// checkpoint (see Runner.backfillCollection).
		if err := fence(ctx); err != nil {
			return err
		}
		cp.UpdatedAt = time.Now()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := cps.ReplaceOne(wctx, bson.D{{Key: "_id", Value: key}}, cp, options.Replace().SetUpsert(true)); err != nil {
			return fmt.Errorf("save backfill range %d of %s: %w", i, name, err)
		}
		saved = time.Now()
		return nil
	}
	wopts := opts
	if opts.Rate > 0 {
		wopts.Rate = opts.Rate / float64(opts.Workers)
	}
	if opts.Progress != nil {
		var last int64
		wopts.Progress = func(p BackfillProgress) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.live += p.Upgraded - last
			last = p.Upgraded
			p.Upgraded, p.Total, p.Remaining, p.Elapsed = t.live, t.live, -1, time.Since(start)
			opts.Progress(p)
		}
	}
	cb := &CollectionBackfill{Collection: name, Target: plan.Target}
	w := &clientWalk{r: r, coll: r.db.Collection(name), name: name, opts: wopts, deadline: deadline, start: time.Now(), cb: cb, cp: &cp,
		save: save, saved: &saved, failed: map[string]*FailureGroup{}, idOnly: !opts.guarded.Available, remaining: -1, bounds: plan.bounds(i)}
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
	if stop != "" && errors.Is(context.Cause(ctx), ErrLockLost) {
		// The walk stopped because the range lease was lost, not because
		// the run was stopped: save nothing (the new holder owns the
		// checkpoint) and let the worker go on with other ranges.
		return "", ErrLockLost
	}
	if stop != "" {
		return stop, save()
	}
	// Record the range done only while the lease is still ours.
	if err := fence(ctx); err != nil {
		return "", err
	}
	cp.Done = true
	return "", save()
}
