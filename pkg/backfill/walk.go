package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/probe"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// clientWalk is one pass of the client path over a collection: one cursor
// in _id order over the documents below the target, read Batch at a time,
// each batch upgraded in Go and written in one unordered bulk write. The
// last _id written is checkpointed every opts.checkpointEvery; a lost
// cursor (network error, failover, cursor timeout) and a later run resume
// with one {_id: {$gt: last}} query. No batch is re-queried.
type clientWalk struct {
	r         *backfiller
	coll      *mongo.Collection
	name      string
	opts      Options
	deadline  time.Time
	start     time.Time
	cb        *CollectionResult
	cp        *checkpoint
	save      func() error
	saved     *time.Time
	failed    map[string]*FailureGroup
	idOnly    bool  // write with _id-only filters (see probe.Capabilities.GuardedWrites)
	remaining int64 // documents below target when the run began (-1: unknown)
	// bounds, if set, restricts the walk to an _id range (see backfillWorkers).
	bounds bson.D
	// raws are the documents of the batch read as they came, copied into
	// arena (a cursor's document is only valid until it moves).
	raws  []bson.Raw
	arena []byte
}

// rewalkHead walks the documents up to and including resumeFrom, where
// the walk that just finished began (see backfiller.backfillCollection).
func (w *clientWalk) rewalkHead(ctx context.Context, resumeFrom any) (stopped string, err error) {
	w.bounds = upToID(resumeFrom, w.opts.ferretDB)
	w.cp.LastID = nil
	return w.run(ctx)
}

// run walks to the end, or until ctx ends or the deadline passes (it then
// returns "interrupted" or "deadline" and the caller saves the checkpoint).
func (w *clientWalk) run(ctx context.Context) (stopped string, err error) {
	var cur *mongo.Cursor
	defer func() {
		if cur != nil {
			_ = cur.Close(context.WithoutCancel(ctx))
		}
	}()
	batch := make([]bson.D, 0, w.opts.Batch)
	lost := 0 // cursors lost in a row
	for {
		if ctx.Err() != nil {
			return "interrupted", nil
		}
		if !w.deadline.IsZero() && time.Now().After(w.deadline) {
			return "deadline", nil
		}
		if cur == nil {
			if cur, err = w.open(ctx); err != nil {
				return w.readFailed(ctx, err)
			}
		}
		batch, err = w.read(ctx, cur, batch[:0])
		if err != nil {
			// The documents of an unfinished batch are read again from the
			// last _id written.
			_ = cur.Close(context.WithoutCancel(ctx))
			cur = nil
			if lost++; probe.Transient(err) && lost < retryAttempts && ctx.Err() == nil {
				time.Sleep(retryFirst << min(lost, 5))
				continue
			}
			return w.readFailed(ctx, err)
		}
		lost = 0
		if len(batch) > 0 {
			if err := w.write(ctx, batch); err != nil {
				return "", err
			}
			// Progress follows the pause: its rate is the run's, not the
			// batch's burst.
			w.throttle(ctx)
			if w.opts.progress != nil {
				left := int64(-1)
				if w.remaining >= 0 {
					left = max(w.remaining-w.cb.Upgraded, 0)
				}
				w.opts.progress(events.BackfillBatch{Collection: w.name, Target: w.cp.Target, Upgraded: w.cb.Upgraded, Total: w.cp.Upgraded, Remaining: left, Elapsed: time.Since(w.start)})
			}
		}
		if len(batch) < w.opts.Batch {
			return "", nil // the cursor is exhausted
		}
	}
}

// open starts the cursor after the checkpoint's _id.
func (w *clientWalk) open(ctx context.Context) (*mongo.Cursor, error) {
	filter := w.r.belowFilter(w.cp.Target)
	and := bson.A{}
	if w.cp.LastID != nil {
		and = append(and, afterID(w.cp.LastID, w.opts.ferretDB))
	}
	if len(w.bounds) > 0 {
		and = append(and, w.bounds)
	}
	if len(and) > 0 {
		filter = bson.D{{Key: "$and", Value: append(and, filter)}}
	}
	w.cb.RoundTrips++
	return w.coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(int32(w.opts.Batch)))
}

// read appends up to Batch documents from cur to batch, and the same
// documents as read to w.raws, counting each getMore as a round trip.
func (w *clientWalk) read(ctx context.Context, cur *mongo.Cursor, batch []bson.D) ([]bson.D, error) {
	w.arena, w.raws = w.arena[:0], w.raws[:0]
	var ends []int
	defer func() {
		start := 0
		for _, end := range ends {
			w.raws = append(w.raws, bson.Raw(w.arena[start:end]))
			start = end
		}
	}()
	for len(batch) < w.opts.Batch {
		if cur.RemainingBatchLength() == 0 && cur.ID() != 0 {
			w.cb.RoundTrips++
		}
		if !cur.Next(ctx) {
			return batch, cur.Err()
		}
		var d bson.D
		if err := bson.Unmarshal(cur.Current, &d); err != nil {
			return batch, fmt.Errorf("decode a %s document after _id %v: %w", w.name, w.cp.LastID, err)
		}
		batch = append(batch, d)
		w.arena = append(w.arena, cur.Current...)
		ends = append(ends, len(w.arena))
	}
	return batch, nil
}

func (w *clientWalk) readFailed(ctx context.Context, err error) (string, error) {
	if ctx.Err() != nil {
		return "interrupted", nil
	}
	after := "from the start"
	if w.cp.LastID != nil {
		after = fmt.Sprintf("after _id %v", w.cp.LastID)
	}
	return "", fmt.Errorf("read %s %s: %w; nothing is lost: run backfill again, it resumes from the checkpoint", w.name, after, err)
}

// write upgrades and writes one batch, advances the checkpoint's _id and
// saves it when it is due.
func (w *clientWalk) write(ctx context.Context, docs []bson.D) error {
	r := w.r
	if r.hook != nil {
		r.hook("backfill.read", w.cp.Target, len(docs))
	}
	// The batch is written even if ctx is cancelled meanwhile: Ctrl-C stops
	// at a batch boundary.
	if w.opts.writeTurn != nil {
		w.opts.writeTurn.Lock()
	}
	g := guards{idOnly: w.idOnly, arrays: w.opts.arrays}
	g.whole = !w.idOnly && !w.opts.perField && r.registry.ReadsWhole(w.name, nil) && r.wholeGuards(ctx, w.coll, w.opts.guarded.Available)
	n, conflicts, trips, err := r.writeBatch(ctx, w.coll, w.name, docs, w.raws, w.failed, g)
	if w.opts.writeTurn != nil {
		w.opts.writeTurn.Unlock()
	}
	w.cb.RoundTrips += trips
	w.cb.Upgraded += n
	w.cp.Upgraded += n
	w.cb.Conflicts += conflicts
	w.cb.Batches++
	if err != nil {
		_ = w.save()
		return err
	}
	if id, ok := bsonx.Lookup(docs[len(docs)-1], "_id"); ok {
		w.cp.LastID = id
	}
	if r.hook != nil {
		r.hook("backfill.batch", w.cp.Target, int(w.cb.Batches))
	}
	if time.Since(*w.saved) >= w.opts.checkpointEvery {
		return w.save()
	}
	return nil
}

// rateBatch caps a batch at what rate allows in about a second, so the
// first batch is no burst above the rate either (rate 0: no cap).
func rateBatch(batch int, rate float64) int {
	if rate <= 0 {
		return batch
	}
	return max(1, min(batch, int(rate)))
}

// throttle sleeps until the run's average rate is back under opts.Rate.
func (w *clientWalk) throttle(ctx context.Context) {
	if w.opts.Rate <= 0 {
		return
	}
	due := w.start.Add(time.Duration(float64(w.cb.Upgraded) / w.opts.Rate * float64(time.Second)))
	if !w.deadline.IsZero() && due.After(w.deadline) {
		due = w.deadline
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(due)):
	}
}
