package runner_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/runner"
)

// sched is the explorer's scheduler: every command an actor's client
// sends blocks in the client's command monitor (Started) until the
// scheduler releases it, and the scheduler releases one waiting command
// at a time, chosen by its seeded PRNG. An actor's own code between two
// commands runs alone, so the interleaving is exactly the seed's.
//
// Passed without a gate (no scheduling point): hello (lease.ServerTime),
// the lease renewals (update on mongomig_lock, sent by the heartbeat
// goroutine and by Fence's renewal), and the driver's own endSessions,
// killCursors. The heartbeat thus renews in real time, so a lease only
// expires where the scheduler stalls an actor on purpose (see stall).
type sched struct {
	t   *testing.T
	rng *rand.Rand

	mu        sync.Mutex
	waiting   []*waiter
	arrivals  map[string]int
	done      map[string]bool
	frozen    map[string]time.Time // lease renewals blocked until then (a stalled process)
	hello     map[string]time.Time // the actor's last hello (a renewal's send time)
	renewed   map[string]time.Time // the send time of the actor's last lease write
	tokens    map[string]string    // actor -> its migration lock's token
	validator bson.Raw             // the last validator sent for users
	changed   chan struct{}
	log       []string
	onArrive  func(actor string, cmd bson.Raw) // runs in the actor's goroutine, before it waits
}

type waiter struct {
	actor, desc string
	seq         int
	release     chan struct{}
}

func newSched(t *testing.T, seed uint64) *sched {
	return &sched{t: t, rng: rand.New(rand.NewPCG(seed, 0xe7)), arrivals: map[string]int{}, done: map[string]bool{},
		frozen: map[string]time.Time{}, hello: map[string]time.Time{}, renewed: map[string]time.Time{}, tokens: map[string]string{}, changed: make(chan struct{}, 1)}
}

func (s *sched) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *sched) logf(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf(format, a...))
}

// client is a client of uri whose every command is a scheduling point of
// actor.
func (s *sched) client(uri, actor string) *mongo.Client {
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		s.started(actor, e.CommandName, e.Command)
	}}
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetMonitor(mon))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func (s *sched) started(actor, name string, cmd bson.Raw) {
	coll, _ := cmd.Lookup(name).StringValueOK()
	switch {
	case name == "hello" || name == "isMaster":
		s.mu.Lock()
		s.hello[actor] = time.Now()
		s.mu.Unlock()
		return
	case name == "endSessions" || name == "killCursors":
		return
	case name == "update" && coll == runner.DefaultLockCollection:
		s.mu.Lock()
		until := s.frozen[actor]
		s.mu.Unlock()
		time.Sleep(time.Until(until)) // a stalled process renews nothing
		s.mu.Lock()
		s.renewed[actor] = s.hello[actor]
		s.mu.Unlock()
		return
	case name == "insert" && coll == runner.DefaultLockCollection:
		s.mu.Lock()
		s.renewed[actor] = s.hello[actor]
		s.mu.Unlock()
		doc, _ := cmd.Lookup("documents", "0").DocumentOK()
		id, _ := doc.Lookup("_id").StringValueOK()
		if tok, ok := doc.Lookup("token").StringValueOK(); ok && id == lease.MigrationLock {
			s.mu.Lock()
			s.tokens[actor] = tok
			s.mu.Unlock()
		}
	}
	if s.onArrive != nil {
		s.onArrive(actor, cmd)
	}
	s.wait(actor, describe(name, coll, cmd))
	if (name == "collMod" || name == "create") && coll == "users" {
		if v, err := cmd.LookupErr("validator"); err == nil {
			s.mu.Lock()
			s.validator = append(bson.Raw(nil), v.Document()...)
			s.mu.Unlock()
		}
	}
}

// acceptedVersions are the document versions the validator last sent
// for users accepts (nil: any), read from its version conditions.
func (s *sched) acceptedVersions() map[int64]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.validator == nil {
		return nil
	}
	var out map[int64]bool
	var walk func(k string, v bson.RawValue)
	walk = func(k string, v bson.RawValue) {
		if k == "version" {
			if out == nil {
				out = map[int64]bool{}
			}
			if n, ok := v.AsInt64OK(); ok {
				out[n] = true
			} else {
				out[0] = true // missing or null: version 0
			}
			return
		}
		var elems []bson.RawElement
		if d, ok := v.DocumentOK(); ok {
			if k == "$jsonSchema" {
				return
			}
			elems, _ = d.Elements()
		} else if a, ok := v.ArrayOK(); ok {
			elems, _ = bson.Raw(a).Elements()
		}
		for _, e := range elems {
			walk(e.Key(), e.Value())
		}
	}
	elems, _ := s.validator.Elements()
	for _, e := range elems {
		walk(e.Key(), e.Value())
	}
	return out
}

func describe(name, coll string, cmd bson.Raw) string {
	d := name + " " + coll
	if name == "createIndexes" || name == "dropIndexes" {
		if v, err := cmd.LookupErr("index"); err == nil {
			d += " " + v.String()
		} else if v, err := cmd.LookupErr("indexes", "0", "name"); err == nil {
			d += " " + v.String()
		}
	}
	return d
}

// wait is a scheduling point: it blocks until the scheduler releases it.
func (s *sched) wait(actor, desc string) {
	w := &waiter{actor: actor, desc: desc, release: make(chan struct{})}
	s.mu.Lock()
	s.arrivals[actor]++
	w.seq = s.arrivals[actor]
	s.waiting = append(s.waiting, w)
	s.mu.Unlock()
	s.signal()
	<-w.release
}

// spawn starts an actor; the scheduler waits for it to reach its first
// command.
func (s *sched) spawn(name string, fn func()) {
	s.mu.Lock()
	before := s.arrivals[name]
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			s.done[name] = true
			s.mu.Unlock()
			s.signal()
		}()
		fn()
	}()
	s.settle(name, before)
}

// settle waits until actor reaches a new scheduling point or ends. Only
// an actor with goroutines of its own (backfill workers, the deferred
// queue) can make this time out, which then just goes on.
func (s *sched) settle(actor string, before int) {
	deadline := time.After(3 * time.Second)
	for {
		s.mu.Lock()
		ok := s.arrivals[actor] > before || s.done[actor]
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-deadline:
			s.logf("(%s did not reach a command within 3s: other goroutines of its own)", actor)
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// step releases one waiting command chosen by the seed and lets its actor
// run to its next command. It reports false when no command waits.
func (s *sched) step(pick func(ws []*waiter) int) bool {
	s.mu.Lock()
	if len(s.waiting) == 0 {
		s.mu.Unlock()
		return false
	}
	sort.SliceStable(s.waiting, func(i, j int) bool {
		if s.waiting[i].actor != s.waiting[j].actor {
			return s.waiting[i].actor < s.waiting[j].actor
		}
		return s.waiting[i].seq < s.waiting[j].seq
	})
	i := pick(s.waiting)
	w := s.waiting[i]
	s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
	before := s.arrivals[w.actor]
	s.log = append(s.log, w.actor+": "+w.desc)
	s.mu.Unlock()
	close(w.release)
	s.settle(w.actor, before)
	return true
}

// allDone reports whether every spawned actor ended.
func (s *sched) allDone(names []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if !s.done[n] {
			return false
		}
	}
	return true
}

// freeze blocks actor's lease renewals until until.
func (s *sched) freeze(actor string, until time.Time) {
	s.mu.Lock()
	s.frozen[actor] = until
	s.mu.Unlock()
}

// validUntil is when actor's lease stops holding by its own clock
// (pkg/lease: the last renewal's send time plus the lease less the margin).
func (s *sched) validUntil(actor string, l time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewed[actor].Add(l - lease.Margin(l))
}

func (s *sched) token(actor string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[actor]
}
