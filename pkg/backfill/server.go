package backfill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// serverWalk upgrades, with server-side updates only, the documents of a
// collection at each version whose whole upgrade chain has a server-side
// form. It reads the _ids of the documents at that version with one
// cursor, ServerRange at a time, and upgrades each such _id range on the
// server, so every write is bounded (ServerRange is capped by Rate, see
// rateBatch),
// throttled by Rate, shows in progress, and ctx and the deadline are
// honoured between two updates.
//
// Where the server has pipeline updates, a range is ONE pipeline update
// (version.PipelinePlan): every step and the new version at once, atomic
// per document, no marker; a version without a pipeline plan goes through
// the client path. Only where the server has none (the first pipeline
// update is refused as unknown) is a range one updateMany per unit of
// version.ServerPlan, each advancing the progress marker
// (version.MarkerField), which carries the nonce this backfill keeps for
// the plan (internal/state): every document gets each unit exactly once,
// even across crashes and concurrent lazy upgrades (which resume from the
// marker), and a marker that arrived in application data matches no
// update. Documents whose upgrade the client path would refuse are left to
// it: those a pipeline cannot reproduce exactly or a rename onto a value
// (PipelinePlan.Eligible, ServerUpdate.Hold), and, where the target schema
// is enforced (validationAction error), those whose upgrade fails it
// (checked in Go first, see invalid). Transient errors are retried with
// backoff and, once the retries run out, returned: never hidden by falling
// back to the client path. The rest of a version whose update the server
// refuses for some document goes through the client path.
type serverWalk struct {
	r         *backfiller
	coll      *mongo.Collection
	name      string
	opts      Options
	deadline  time.Time
	start     time.Time
	cb        *CollectionResult
	cp        *checkpoint
	remaining int64
	// enforce: the target schema is enforced, so each range is checked in
	// Go first (see invalid).
	enforce bool
	nonce   string // the marker plan's nonce, once read or created
}

// rangeFunc upgrades the documents at one version in _id range rng but
// those of exclude, and returns how many it wrote.
type rangeFunc func(ctx context.Context, rng bson.D, exclude bson.A) (int64, string, error)

func (w *serverWalk) run(ctx context.Context) (stopped string, err error) {
	target := w.r.registry.Current(w.name)
	for _, from := range w.r.registry.Versions(w.name) {
		if from >= target {
			continue
		}
		stopped, err := w.upgradeVersion(ctx, from)
		if stopped != "" || err == nil {
			if stopped != "" {
				return stopped, nil
			}
			continue
		}
		if errors.Is(err, lease.ErrLost) {
			return "", err // not the server's refusal: the run stops
		}
		if probe.Transient(err) {
			return "", fmt.Errorf("server-side upgrade of %s from version %d: %w (%d attempts); nothing is lost: run backfill again, it continues where it stopped", w.name, from, err, retryAttempts)
		}
		// The server refused an update for some document: the client path
		// walks what is left (resuming marked documents) and reports it.
		w.cb.ServerSideNote = fmt.Sprintf("server-side upgrade from version %d stopped (%v); the rest went through the client", from, err)
	}
	return "", nil
}

// upgradeVersion upgrades the documents at version from on the path the
// server allows, if any.
func (w *serverWalk) upgradeVersion(ctx context.Context, from int64) (string, error) {
	if w.r.pipelines() && w.opts.pipeline {
		p, ok := w.r.registry.PipelinePlan(w.name, from)
		if !ok {
			return "", nil // the client path
		}
		stopped, err := w.version(ctx, from, w.pipelineRange(p))
		if !errors.As(err, new(*noPipelines)) {
			return stopped, err
		}
		w.r.mu.Lock()
		w.r.noPipelines = true // the other ranges' workers read it under mu
		w.r.mu.Unlock()
		w.cb.ServerSideNote = err.Error()
	}
	if !w.opts.markers {
		return "", nil
	}
	p, ok := w.r.registry.ServerPlan(w.name, from)
	if !ok {
		return "", nil
	}
	if w.nonce == "" {
		n, err := w.r.store.MarkerNonce(ctx, w.name, w.cp.Target, true)
		if err != nil {
			return "", err
		}
		w.nonce = n
		w.r.setNonce(w.name, n)
	}
	p.Nonce = w.nonce
	return w.version(ctx, from, func(ctx context.Context, rng bson.D, exclude bson.A) (int64, string, error) {
		return w.r.runPlan(ctx, w.coll, p, rng, exclude, w.cb)
	})
}

// version upgrades the documents at version from, range by range, with up.
// The next range (its _ids, and where the target schema is enforced its
// check, see invalid) is read while the current range's update runs: one
// read ahead at most, its round trips counted once it is used, and the
// walk waits for it before it returns.
func (w *serverWalk) version(ctx context.Context, from int64, up rangeFunc) (string, error) {
	vm := w.r.registry.VersionIs(from)
	var cur *mongo.Cursor
	var ahead chan rangeRead
	defer func() {
		if ahead != nil {
			<-ahead // the read ahead uses cur
		}
		if cur != nil {
			_ = cur.Close(context.WithoutCancel(ctx))
		}
	}()
	next := w.readRange(ctx, &cur, vm, nil)
	for {
		if ctx.Err() != nil {
			return "interrupted", nil
		}
		if !w.deadline.IsZero() && time.Now().After(w.deadline) {
			return "deadline", nil
		}
		rr := next
		w.cb.RoundTrips += rr.trips
		if rr.err != nil {
			if ctx.Err() != nil {
				return "interrupted", nil
			}
			return "", rr.err
		}
		if len(rr.ids) == 0 {
			return "", nil
		}
		more := len(rr.ids) == w.opts.ServerRange
		if more && !w.opts.serial {
			ahead = make(chan rangeRead, 1)
			go func(last any) { ahead <- w.readRange(ctx, &cur, vm, last) }(rr.ids[len(rr.ids)-1])
		}
		n, stopped, err := up(ctx, rr.rng, rr.exclude)
		// What this run's updates wrote, nothing else (issue 24, hole 8).
		w.cb.Upgraded += n
		w.cb.ServerSide += n
		w.cp.Upgraded += n
		if stopped != "" || err != nil {
			return stopped, err
		}
		(&clientWalk{opts: w.opts, deadline: w.deadline, start: w.start, cb: w.cb}).throttle(ctx)
		if w.opts.progress != nil {
			left := int64(-1)
			if w.remaining >= 0 {
				left = max(w.remaining-w.cb.Upgraded, 0)
			}
			w.opts.progress(events.BackfillBatch{Collection: w.name, Target: w.cp.Target, Upgraded: w.cb.Upgraded, Total: w.cp.Upgraded, Remaining: left, Elapsed: time.Since(w.start)})
		}
		switch {
		case !more:
			return "", nil
		case w.opts.serial:
			next = w.readRange(ctx, &cur, vm, rr.ids[len(rr.ids)-1])
		default:
			next = <-ahead
			ahead = nil
		}
	}
}

// rangeRead is one range as read for its update: its _ids, the _id range
// they span, those the update leaves out (see invalid), the round trips
// it took.
type rangeRead struct {
	ids     []any
	rng     bson.D
	exclude bson.A
	trips   int64
	err     error
}

// readRange reads the next range after last (see ids and invalid).
func (w *serverWalk) readRange(ctx context.Context, cur **mongo.Cursor, vm bson.D, last any) (rr rangeRead) {
	rr.ids, rr.err = w.ids(ctx, cur, vm, last, &rr.trips)
	if rr.err != nil || len(rr.ids) == 0 {
		return rr
	}
	rr.rng = bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: rr.ids[0]}, {Key: "$lte", Value: rr.ids[len(rr.ids)-1]}}}}
	if w.enforce {
		rr.exclude, rr.err = w.invalid(ctx, rr.rng, vm, &rr.trips)
	}
	return rr
}

// ids reads the next ServerRange _ids at the version matched by vm from one
// cursor in _id order (*cur, opened after last when nil). A lost cursor is
// reopened after last, with backoff, on transient errors.
func (w *serverWalk) ids(ctx context.Context, cur **mongo.Cursor, vm bson.D, last any, trips *int64) ([]any, error) {
	var ids []any
	err := retryTransient(ctx, func() error {
		if *cur == nil {
			filter := vm
			if last != nil {
				filter = bson.D{{Key: "$and", Value: bson.A{afterID(last, w.opts.ferretDB), vm}}}
			}
			c, err := w.coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).
				SetProjection(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(int32(w.opts.ServerRange)))
			*trips++
			if err != nil {
				return err
			}
			*cur = c
		}
		ids = ids[:0]
		for len(ids) < w.opts.ServerRange {
			if (*cur).RemainingBatchLength() == 0 && (*cur).ID() != 0 {
				*trips++
			}
			if !(*cur).Next(ctx) {
				break
			}
			// A copy: Current's bytes belong to the cursor and may be
			// reused once it moves on.
			id := (*cur).Current.Lookup("_id")
			id.Value = bytes.Clone(id.Value)
			ids = append(ids, id)
		}
		if err := (*cur).Err(); err != nil {
			_ = (*cur).Close(context.WithoutCancel(ctx))
			*cur = nil
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the _ids of %s after %v: %w", w.name, last, err)
	}
	return ids, nil
}

// withMarker adds $set {marker: p.Marker(k)} to an update.
func withMarker(update bson.D, p *version.ServerPlan, k int) bson.D {
	out := make(bson.D, 0, len(update)+1)
	added := false
	for _, e := range update {
		if e.Key == "$set" {
			set := append(append(bson.D{}, e.Value.(bson.D)...), bson.E{Key: version.MarkerField, Value: p.Marker(k)})
			out = append(out, bson.E{Key: "$set", Value: set})
			added = true
			continue
		}
		out = append(out, e)
	}
	if !added {
		out = append(out, bson.E{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: p.Marker(k)}}})
	}
	return out
}

// runPlan applies plan p to the documents in range rng (an _id range) but
// those of exclude, one updateMany per unit. It stops between two updates when ctx ends (the
// markers make that safe) and returns how many documents reached p.To.
func (r *backfiller) runPlan(ctx context.Context, coll *mongo.Collection, p *version.ServerPlan, rng bson.D, exclude bson.A, cb *CollectionResult) (int64, string, error) {
	vm := r.registry.VersionIs(p.From)
	if len(exclude) > 0 {
		// Left to the client path, from every unit (see serverWalk.invalid).
		rng = bson.D{{Key: "$and", Value: bson.A{rng, notIn(exclude)}}}
	}
	update := func(filter, upd bson.D) (*mongo.UpdateResult, error) {
		var res *mongo.UpdateResult
		err := retryTransient(ctx, func() (err error) {
			if err := lease.Fence(ctx); err != nil {
				return err // the backfill lease may have expired: write nothing
			}
			res, err = coll.UpdateMany(context.WithoutCancel(ctx), filter, upd)
			return err
		})
		cb.RoundTrips++
		return res, err
	}
	for k, u := range p.Units {
		if ctx.Err() != nil {
			return 0, "interrupted", nil
		}
		and := append(bson.A{rng, vm, p.MarkerIs(k)}, guardClauses(u.Guard)...)
		if len(u.Hold) > 0 {
			and = append(and, u.Hold)
		}
		filter := bson.D{{Key: "$and", Value: and}}
		if _, err := update(filter, withMarker(u.Update, p, k+1)); err != nil {
			return 0, "", fmt.Errorf("unit %d of %d: %w", k+1, len(p.Units), err)
		}
		if len(u.Guard) > 0 {
			// Documents the guard excluded (a default whose field exists)
			// only advance: exactly those (the guard's negation), so a
			// document that appeared since the guarded update (an old
			// application's insert) is not advanced past the step.
			adv := bson.D{{Key: "$and", Value: bson.A{rng, vm, p.MarkerIs(k), // a default's unit has no Hold
				bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "$and", Value: guardClauses(u.Guard)}}}}}}}}
			if _, err := update(adv, bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: p.Marker(k + 1)}}}}); err != nil {
				return 0, "", fmt.Errorf("unit %d of %d: %w", k+1, len(p.Units), err)
			}
		}
		if r.hook != nil {
			r.hook("backfill.unit", p.From, k+1)
		}
	}
	final := bson.D{{Key: "$and", Value: bson.A{rng, vm, p.MarkerIs(len(p.Units))}}}
	res, err := update(final, bson.D{
		{Key: "$set", Value: bson.D{{Key: r.registry.Field(), Value: versionNumber(p.To)}}},
		{Key: "$unset", Value: bson.D{{Key: version.MarkerField, Value: ""}}},
	})
	if err != nil {
		return 0, "", fmt.Errorf("final update: %w", err)
	}
	return res.ModifiedCount, "", nil
}

func guardClauses(g bson.D) bson.A {
	out := bson.A{}
	for _, e := range g {
		out = append(out, bson.D{e})
	}
	return out
}

// versionNumber stores versions as version.Stamp does.
func versionNumber(v int64) any {
	if v <= 1<<31-1 {
		return int32(v)
	}
	return v
}
