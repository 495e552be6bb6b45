package versioned

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
)

// Policy says what happens to an upgrade once it is served.
type Policy int

const (
	// Never writes nothing back (the default): every read of an old
	// document upgrades it again, until a backfill persists it.
	Never Policy = iota
	// Sync writes the upgrade back before the read returns, with the
	// guarded delta of [version.Registry.WriteBack]. A failure is reported
	// to the observer and counted; the read is served all the same.
	Sync
	// Deferred queues the write-back and returns at once; a goroutine
	// sends the queue as unordered bulk writes (see [DeferredOptions]).
	Deferred
)

func (p Policy) String() string {
	switch p {
	case Never:
		return "never"
	case Sync:
		return "sync"
	case Deferred:
		return "deferred"
	}
	return "unknown"
}

// DeferredOptions bound the [Deferred] policy's queue. Memory is bounded
// by Queue+Batch pending write-backs (two copies of a document each).
type DeferredOptions struct {
	// Queue is how many write-backs may wait (default 1024). A read that
	// finds the queue full drops its write-back (counted, reported)
	// rather than wait.
	Queue int
	// Batch is how many guarded updates one bulk write carries (default
	// 50). The embedded test server (FerretDB) hangs on an update command
	// of 100 or more matching statements: keep it at 50 or fewer there.
	Batch int
	// Interval sends a partial batch that has waited this long (default
	// 1s; negative: only full batches, and what is left at Close).
	Interval time.Duration
	// Timeout bounds each bulk write (default 10s).
	Timeout time.Duration
}

func (o DeferredOptions) withDefaults() DeferredOptions {
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Batch <= 0 {
		o.Batch = 50
	}
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return o
}

// upgraded reports an upgrade of before into after and writes it back as
// the policy says. owned is false when before is a buffer the driver
// reuses (a cursor's Current), so the deferred queue copies it.
func (c *Collection) upgraded(ctx context.Context, before, after bson.Raw, writeBack, owned bool) {
	c.stats.upgraded.Add(1)
	from, _ := c.reg.VersionOfRaw(before)
	var id any
	if c.observer != nil {
		id = idOf(before)
		c.event(Event{Kind: Upgraded, ID: id, From: from, To: c.current})
	}
	if !writeBack {
		return
	}
	switch c.policy {
	case Sync:
		c.writeBackNow(ctx, before, after, id, from)
	case Deferred:
		if !owned {
			before = append(bson.Raw(nil), before...)
		}
		if c.queue.push(item{before: before, after: after}) {
			c.stats.queued.Add(1)
			return
		}
		c.stats.dropped.Add(1)
		if c.observer != nil {
			c.event(Event{Kind: Dropped, ID: id, From: from, To: c.current})
		}
	}
}

// writeBackNow is the Sync policy: the guarded delta, sent now.
func (c *Collection) writeBackNow(ctx context.Context, before, after bson.Raw, id any, from int64) {
	var b, a bson.D
	err := bson.Unmarshal(before, &b)
	if err == nil {
		err = bson.Unmarshal(after, &a)
	}
	won := false
	if err == nil {
		won, err = c.reg.WriteBack(ctx, c.coll, b, a)
	}
	switch {
	case err != nil:
		c.stats.failed.Add(1)
		c.event(Event{Kind: Failed, ID: id, From: from, To: c.current, Count: 1, Err: err})
		return
	case won:
		c.stats.written.Add(1)
	default:
		c.stats.lost.Add(1)
	}
	c.event(Event{Kind: WroteBack, ID: id, From: from, To: c.current, Won: won})
}

// item is one deferred write-back: the document as read and upgraded.
type item struct{ before, after bson.Raw }

// queue is the Deferred policy's bounded queue and its one goroutine.
//
// Invariants: a push never blocks (a full or closed queue refuses);
// once close has taken mu, no push can succeed, so the drain that follows
// sees every write-back ever accepted; at most Queue items wait in the
// channel and at most Batch in the goroutine's batch.
type queue struct {
	c        *Collection
	opts     DeferredOptions
	mu       sync.RWMutex
	closed   bool
	items    chan item
	stop     chan struct{}
	done     chan struct{}
	closeCtx context.Context
}

func startQueue(c *Collection, opts DeferredOptions) *queue {
	q := &queue{c: c, opts: opts, items: make(chan item, opts.Queue),
		stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue) push(it item) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return false
	}
	select {
	case q.items <- it:
		return true
	default:
		return false
	}
}

func (q *queue) close(ctx context.Context) error {
	q.mu.Lock()
	already := q.closed
	if !already {
		q.closed, q.closeCtx = true, ctx
		close(q.stop)
	}
	q.mu.Unlock()
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *queue) run() {
	defer close(q.done)
	batch := make([]item, 0, q.opts.Batch)
	var tick <-chan time.Time
	if q.opts.Interval > 0 {
		t := time.NewTicker(q.opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case it := <-q.items:
			if batch = append(batch, it); len(batch) == q.opts.Batch {
				batch = q.flush(context.Background(), batch)
			}
		case <-tick:
			batch = q.flush(context.Background(), batch)
		case <-q.stop:
			q.drain(batch)
			return
		}
	}
}

// drain sends everything left, in batches, with Close's context.
func (q *queue) drain(batch []item) {
	for {
		select {
		case it := <-q.items:
			if batch = append(batch, it); len(batch) == q.opts.Batch {
				batch = q.flush(q.closeCtx, batch)
			}
		default:
			q.flush(q.closeCtx, batch)
			return
		}
	}
}

// flush sends batch as one unordered bulk write of guarded updates (a
// document queued twice is written once, from the later read: an earlier
// one may have been read before another writer's change, and lose) and
// returns it emptied.
func (q *queue) flush(ctx context.Context, batch []item) []item {
	if len(batch) == 0 {
		return batch
	}
	c := q.c
	models := make([]mongo.WriteModel, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	for i := len(batch) - 1; i >= 0; i-- {
		it := batch[i]
		idv := it.before.Lookup("_id")
		key := string(rune(idv.Type)) + string(idv.Value)
		if seen[key] {
			c.stats.coalesced.Add(1)
			continue
		}
		seen[key] = true
		d, err := c.delta(it)
		if err != nil {
			c.stats.failed.Add(1)
			c.event(Event{Kind: Failed, ID: idOf(it.before), Count: 1, Err: err})
			continue
		}
		if !d.Empty() {
			models = append(models, mongo.NewUpdateOneModel().SetFilter(d.Filter).SetUpdate(d.Update))
		}
	}
	clear(batch)
	if len(models) == 0 {
		return batch[:0]
	}
	ctx, cancel := context.WithTimeout(ctx, q.opts.Timeout)
	defer cancel()
	c.stats.bulks.Add(1)
	res, err := c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		// A failed bulk write's counts cannot be trusted (FerretDB answers
		// zero even for statements it applied): count them all as failed.
		c.stats.failed.Add(int64(len(models)))
		c.event(Event{Kind: Failed, Count: len(models), Err: err})
		return batch[:0]
	}
	c.stats.written.Add(res.MatchedCount)
	c.stats.lost.Add(int64(len(models)) - res.MatchedCount)
	c.event(Event{Kind: Flushed, Count: len(models), Matched: int(res.MatchedCount)})
	return batch[:0]
}

// delta is the guarded update of one queued write-back.
func (c *Collection) delta(it item) (version.Delta, error) {
	var b, a bson.D
	if err := bson.Unmarshal(it.before, &b); err != nil {
		return version.Delta{}, err
	}
	if err := bson.Unmarshal(it.after, &a); err != nil {
		return version.Delta{}, err
	}
	return c.reg.DeltaFor(c.name, b, a)
}
