package versioned

import "sync/atomic"

// EventKind says what an [Event] reports.
type EventKind int

const (
	// Upgraded: a document was read at an older version (From) and
	// served at the current one (To). It is reported before any
	// write-back of that document.
	Upgraded EventKind = iota + 1
	// WroteBack: a synchronous write-back ran. Won is false when the
	// document changed since the read: nothing was written and the other
	// writer's change stands.
	WroteBack
	// Flushed: a deferred batch was sent as one unordered bulk write of
	// Count guarded updates, Matched of which won; the others lost.
	Flushed
	// Dropped: the deferred queue was full or closed; the upgrade was
	// served, this read writes nothing back.
	Dropped
	// Failed: a write-back of Count updates failed with Err. The read was
	// served; the next read upgrades the document again.
	Failed
	// TimedOut: a deferred bulk write of Count updates got no answer in
	// time (Err) or lost its connection. Batch is the bulk size from now
	// on (halved); the updates are sent again, each at most three times in
	// all, then reported Failed.
	TimedOut
)

func (k EventKind) String() string {
	switch k {
	case Upgraded:
		return "upgraded"
	case WroteBack:
		return "wrote-back"
	case Flushed:
		return "flushed"
	case Dropped:
		return "dropped"
	case Failed:
		return "failed"
	case TimedOut:
		return "timed-out"
	}
	return "unknown"
}

// Event is what an [Observer] receives. ID, From and To are set for
// Upgraded, WroteBack and Dropped; Count and Matched for Flushed; Count
// and Err for Failed; Count, Batch and Err for TimedOut.
type Event struct {
	Kind       EventKind
	Collection string
	ID         any
	From, To   int64
	Won        bool
	Count      int
	Matched    int
	Batch      int
	Err        error
}

// Observer receives events. It is called on the reading goroutine for
// Upgraded, WroteBack and Dropped, and on the deferred queue's goroutine
// for Flushed, Failed and TimedOut, so it must be safe for concurrent use and quick
// (a counter, not I/O). Nothing calls it for documents already current.
type Observer func(Event)

// Stats counts what a [Collection] did since [New]. Lost write-backs are
// updates that matched nothing because the document changed since the
// read (another writer, or another upgrade): the other writer's change
// stands.
type Stats struct {
	Upgraded  int64 // documents read at an older version and upgraded
	Queued    int64 // deferred write-backs accepted by the queue
	Coalesced int64 // deferred write-backs of a document already in the same batch
	Dropped   int64 // deferred write-backs refused: queue full or closed
	Written   int64 // write-backs that matched and wrote
	Lost      int64 // write-backs that matched nothing
	Failed    int64 // write-backs that failed (server error)
	Bulks     int64 // bulk writes sent by the deferred queue
	Timeouts  int64 // of them, timed out (or lost their connection)
	Retried   int64 // write-backs sent again after a timeout
	Batch     int64 // the deferred queue's bulk size now (adapted to the server)
	Held      int64 // write-backs the gate held (WithWriteBackGate)
}

type counters struct {
	upgraded, queued, coalesced, dropped, written, lost, failed, bulks atomic.Int64
	timeouts, retried, batch                                           atomic.Int64
	held                                                               atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Upgraded: c.upgraded.Load(), Queued: c.queued.Load(), Coalesced: c.coalesced.Load(),
		Dropped: c.dropped.Load(), Written: c.written.Load(), Lost: c.lost.Load(),
		Failed: c.failed.Load(), Bulks: c.bulks.Load(),
		Timeouts: c.timeouts.Load(), Retried: c.retried.Load(), Batch: c.batch.Load(),
		Held: c.held.Load(),
	}
}
