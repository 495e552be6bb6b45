package versioned

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

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
	// Batch is the most guarded updates one bulk write carries (default
	// 50). The queue starts at 10 (or Batch, if smaller), doubles the
	// size after each bulk write the server answers until one times out,
	// then grows it by one, and halves it after each timeout (Stats.Batch
	// is the size now). The embedded test server (FerretDB) hangs on an
	// update command of 100 or more matching statements: keep Batch at 50
	// or fewer there.
	Batch int
	// Interval sends a partial batch that has waited this long (default
	// 1s; negative: only full batches, and what is left at Close).
	Interval time.Duration
	// Timeout bounds each bulk write (default 10s). A bulk write that
	// times out (or loses its connection) is sent again in smaller
	// batches, each write-back at most three times in all, 100ms then
	// 200ms apart; then it is counted as failed.
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
	if !writeBack || c.policy != Never && c.held() {
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
// channel and at most Batch in the goroutine's batch; every accepted
// write-back ends written, lost, coalesced or failed (counted), and one
// that is not written after Close began is in Close's *UnwrittenError.
// The goroutine's context (ctx) ends only when Close's does: then
// nothing more is sent and the bulk write in flight is abandoned.
type queue struct {
	c      *Collection
	opts   DeferredOptions
	mu     sync.RWMutex
	closed bool
	items  chan item
	stop   chan struct{}
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelCauseFunc
	size   sizer // the bulk size, adapted to the server (goroutine only)

	closing  atomic.Bool // Close began: failures go to the report
	report   unwritten
	closeErr error // Close's result, once done is closed
}

func startQueue(c *Collection, opts DeferredOptions) *queue {
	q := &queue{c: c, opts: opts, items: make(chan item, opts.Queue),
		stop: make(chan struct{}), done: make(chan struct{}), size: newSizer(opts.Batch)}
	q.ctx, q.cancel = context.WithCancelCause(context.Background())
	c.stats.batch.Store(int64(q.size.n))
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

// close stops the queue and waits for the goroutine to send what is
// left. When ctx ends first, the goroutine's context is cancelled: the
// bulk write in flight is abandoned, nothing more is sent, and every
// write-back not written is reported in an *UnwrittenError.
func (q *queue) close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		q.closing.Store(true)
		close(q.stop)
	}
	q.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { q.cancel(ctx.Err()) })
	<-q.done
	stop()
	return q.closeErr
}

func (q *queue) run() {
	defer close(q.done)
	defer q.cancel(nil)
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
			if batch = append(batch, it); len(batch) >= q.size.n {
				batch = q.flush(batch)
			}
		case <-tick:
			batch = q.flush(batch)
		case <-q.stop:
			q.drain(batch)
			q.closeErr = q.report.err(q.c.name, q.ctx)
			return
		}
	}
}

// drain sends everything left, in batches of the current size, until
// Close's context ends.
func (q *queue) drain(batch []item) {
	for {
		select {
		case it := <-q.items:
			if batch = append(batch, it); len(batch) >= q.size.n {
				batch = q.flush(batch)
			}
		default:
			q.flush(batch)
			return
		}
	}
}

// flush sends batch as unordered bulk writes of guarded updates (a
// document queued twice is written once, from the later read: an earlier
// one may have been read before another writer's change, and lose) and
// returns it emptied.
func (q *queue) flush(batch []item) []item {
	if len(batch) == 0 {
		return batch
	}
	c := q.c
	todo := make([]pending, 0, len(batch))
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
		d, err := c.delta(q.ctx, it)
		if err != nil {
			q.failed([]pending{{id: idOf(it.before)}}, err)
			continue
		}
		if !d.Empty() {
			todo = append(todo, pending{model: mongo.NewUpdateOneModel().SetFilter(d.Filter).SetUpdate(d.Update), id: idOf(it.before)})
		}
	}
	clear(batch)
	q.send(todo)
	return batch[:0]
}

// delta is the guarded update of one queued write-back, its guards on
// arrays those the server needs (version.ArraysOf: buildInfo, read once
// per client).
func (c *Collection) delta(ctx context.Context, it item) (version.Delta, error) {
	arrays, err := version.ArraysOf(ctx, c.coll.Database().Client())
	if err != nil {
		return version.Delta{}, err
	}
	var b, a bson.D
	if err := bson.Unmarshal(it.before, &b); err != nil {
		return version.Delta{}, err
	}
	if err := bson.Unmarshal(it.after, &a); err != nil {
		return version.Delta{}, err
	}
	return c.reg.DeltaForOn(c.name, b, a, arrays)
}
