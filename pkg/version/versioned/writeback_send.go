package versioned

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The deferred queue's bulk size and retries. A bulk write starts at
// startBatch updates (or Batch, if smaller), doubles after each one the
// server answers until the first timeout, then grows by one, and halves
// after each timeout: the size follows what the server answers in time.
// A write-back whose bulk write times out (or loses its connection) is
// sent again, at most maxAttempts times in all, retryWait apart (doubling).
const (
	startBatch  = 10
	maxAttempts = 3
	retryWait   = 100 * time.Millisecond
)

// sizer is the bulk size, adapted to the server (slow start, then
// additive increase and multiplicative decrease, as TCP's window).
type sizer struct {
	n, max    int
	congested bool // a bulk write has timed out: grow by one
}

func newSizer(maxBatch int) sizer { return sizer{n: min(startBatch, maxBatch), max: maxBatch} }

func (s *sizer) answered(sent int) {
	if sent < s.n {
		return // a partial batch says nothing about a bigger one
	}
	if s.congested {
		s.n = min(s.max, s.n+1)
	} else {
		s.n = min(s.max, 2*s.n)
	}
}

func (s *sizer) timedOut() {
	s.congested = true
	s.n = max(1, s.n/2)
}

// pending is one guarded update waiting to be sent, with its tries.
type pending struct {
	model mongo.WriteModel
	id    any
	tries int
	// unanswered: the last bulk write that carried it got no answer (a
	// timeout, a lost connection): the server may have applied it.
	unanswered bool
}

// retryable is a bulk write that did not get an answer in time (its own
// Timeout) or lost its connection: the server may not have seen it, or
// be slow under load; sending it again in a smaller batch may succeed.
// A guarded update is safe to repeat: once applied, it matches nothing.
func retryable(err error) bool {
	return mongo.IsTimeout(err) || mongo.IsNetworkError(err)
}

// send writes todo in bulk writes of the current size. A bulk write that
// times out halves the size and its updates are sent again (at most
// maxAttempts tries each); when the queue's context ends (Close's did),
// nothing more is sent and what is left fails with that error.
func (q *queue) send(todo []pending) {
	c := q.c
	wait := retryWait
	for len(todo) > 0 {
		if q.ctx.Err() != nil {
			q.failed(todo, context.Cause(q.ctx))
			return
		}
		n := min(len(todo), q.size.n)
		chunk := todo[:n]
		matched, err := q.bulk(chunk)
		switch {
		case err == nil:
			c.stats.written.Add(matched)
			c.stats.lost.Add(int64(n) - matched)
			c.event(Event{Kind: Flushed, Count: n, Matched: int(matched)})
			q.size.answered(n)
			todo, wait = todo[n:], retryWait
		case q.ctx.Err() != nil:
			for i := range chunk {
				chunk[i].unanswered = true // may have been applied
			}
			q.failed(todo, fmt.Errorf("%w (the bulk write in flight: %v)", context.Cause(q.ctx), err))
			return
		case retryable(err):
			q.size.timedOut()
			c.stats.timeouts.Add(1)
			c.stats.batch.Store(int64(q.size.n))
			c.event(Event{Kind: TimedOut, Count: n, Batch: q.size.n, Err: err})
			var again, out []pending
			for _, p := range chunk {
				p.unanswered = true
				if p.tries++; p.tries < maxAttempts {
					again = append(again, p)
				} else {
					out = append(out, p)
				}
			}
			q.failed(out, err)
			c.stats.retried.Add(int64(len(again)))
			todo = append(again, todo[n:]...)
			select {
			case <-q.ctx.Done():
			case <-time.After(wait):
			}
			wait *= 2
			continue
		default:
			// A failed bulk write's counts cannot be trusted (FerretDB
			// answers zero even for statements it applied): all failed.
			q.failed(chunk, err)
			todo = todo[n:]
		}
		c.stats.batch.Store(int64(q.size.n))
	}
}

// bulk sends one unordered bulk write of chunk's updates, bounded by
// Timeout, and returns how many matched.
func (q *queue) bulk(chunk []pending) (int64, error) {
	models := make([]mongo.WriteModel, len(chunk))
	for i, p := range chunk {
		models[i] = p.model
	}
	ctx, cancel := context.WithTimeout(q.ctx, q.opts.Timeout)
	defer cancel()
	q.c.stats.bulks.Add(1)
	res, err := q.c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		return 0, err
	}
	return res.MatchedCount, nil
}

// failed counts ps as failed write-backs, reports them, and, once Close
// began, adds them to its report.
func (q *queue) failed(ps []pending, err error) {
	if len(ps) == 0 {
		return
	}
	q.c.stats.failed.Add(int64(len(ps)))
	q.c.event(Event{Kind: Failed, Count: len(ps), Err: err})
	if q.closing.Load() {
		q.report.add(ps, err)
	}
}

// maxReportedIDs bounds the _ids an UnwrittenError names.
const maxReportedIDs = 10

// unwritten collects the write-backs that failed after Close began.
type unwritten struct {
	mu     sync.Mutex
	count  int
	unsure int // of them, sent in a bulk write that got no answer
	ids    []any
	last   error
}

func (u *unwritten) add(ps []pending, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.count += len(ps)
	for _, p := range ps {
		if p.unanswered {
			u.unsure++
		}
		if len(u.ids) < maxReportedIDs && p.id != nil {
			u.ids = append(u.ids, p.id)
		}
	}
	u.last = err
}

// err is Close's result: nil when every write-back was sent.
func (u *unwritten) err(coll string, ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.count == 0 {
		return nil
	}
	cause := u.last
	if stopped := context.Cause(ctx); stopped != nil && !errors.Is(cause, stopped) {
		cause = errors.Join(stopped, cause)
	}
	return &UnwrittenError{Collection: coll, Count: u.count, Unconfirmed: u.unsure, IDs: u.ids, Err: cause}
}

// UnwrittenError is Close's report of the deferred write-backs it could
// not write: its context ended first, or the server failed them (after
// the bounded retries of a timeout). Nothing is lost but the write-backs:
// those documents stay at the version they were read at, and are
// upgraded again when next read (or by a backfill).
type UnwrittenError struct {
	Collection string
	// Count is how many write-backs were not written.
	Count int
	// Unconfirmed of them were last sent in a bulk write that got no
	// answer (it timed out, or Close's context ended while it was in
	// flight): the server may have applied them.
	Unconfirmed int
	// IDs are the _ids of the first of them (at most 10).
	IDs []any
	// Err is why: Close's context's error, the server's, or both.
	Err error
}

func (e *UnwrittenError) Error() string {
	unsure := ""
	if e.Unconfirmed > 0 {
		unsure = fmt.Sprintf(" (%d of them sent without an answer: the server may have applied them)", e.Unconfirmed)
	}
	return fmt.Sprintf("%s: %d deferred write-backs not written at Close%s, _id %v: %v; those documents keep their stored version and are upgraded again when read",
		e.Collection, e.Count, unsure, e.IDs, e.Err)
}

func (e *UnwrittenError) Unwrap() error { return e.Err }
