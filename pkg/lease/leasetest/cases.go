package leasetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
)

// oneHolderAtATime: Contenders goroutines, each with its own client, take
// the same lease in every round, fence twice while holding it, and
// release it. A shared log records each acquisition and the start of each
// successful fence: a fence that started after a later acquisition of
// someone else succeeded means two holders at once.
func oneHolderAtATime(t *testing.T, s suite) {
	ctx := context.Background()
	type entry struct {
		token string
		fence bool // else an acquisition
		at    time.Time
	}
	var (
		mu         sync.Mutex
		log        []entry
		acquired   atomic.Int64
		takenOver  atomic.Int64
		losses     atomic.Int64
		colls      = make([]*mongo.Collection, Contenders)
		rounds     = Rounds()
		holdFences = 2
	)
	add := func(e entry) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, e)
	}
	for i := range colls {
		colls[i] = s.collection(t)
	}
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		for i := 0; i < Contenders; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts := s.options(fmt.Sprintf("contender-%d", i))
				opts.Events = func(e lease.Event) {
					if e.Kind == lease.EventTakenOver {
						takenOver.Add(1)
					}
				}
				h, err := lease.Acquire(ctx, colls[i], "contended", opts)
				if err != nil {
					t.Errorf("round %d, contender %d: %v", round, i, err)
					return
				}
				acquired.Add(1)
				add(entry{token: h.Token(), at: time.Now()})
				for k := 0; k < holdFences; k++ {
					start := time.Now()
					if err := h.Fence(ctx); err != nil {
						// Allowed (a stalled machine lets the lease lapse);
						// the fence refused, which is its job.
						losses.Add(1)
						break
					}
					add(entry{token: h.Token(), fence: true, at: start})
					time.Sleep(5 * time.Millisecond)
				}
				if err := h.Release(ctx); err != nil {
					t.Errorf("round %d, contender %d: %v", round, i, err)
				}
			}()
		}
		wg.Wait()
	}
	entered := map[string]time.Time{}
	for _, e := range log {
		if !e.fence {
			entered[e.token] = e.at
		}
	}
	overlaps := 0
	for _, e := range log {
		if !e.fence {
			continue
		}
		for tok, at := range entered {
			if tok != e.token && at.After(entered[e.token]) && e.at.After(at) {
				overlaps++
				t.Errorf("holder %s fenced successfully after %s had acquired the lease", e.token, tok)
			}
		}
	}
	if want := int64(rounds * Contenders); acquired.Load() != want {
		t.Errorf("%d acquisitions, want %d", acquired.Load(), want)
	}
	t.Logf("%d rounds x %d contenders: %d acquisitions, %d takeovers of an expired lease, %d fences refused, %d overlapping holders",
		rounds, Contenders, acquired.Load(), takenOver.Load(), losses.Load(), overlaps)
}

// staleTakenOver: a lease left by a dead holder blocks until it expires by
// the server's clock; then exactly that document is replaced.
func staleTakenOver(t *testing.T, s suite) {
	ctx := context.Background()
	coll := s.collection(t)
	now := serverNow(t, coll)
	expires := now.Add(3 * s.Lease / 2)
	if _, err := coll.InsertOne(ctx, bson.D{
		{Key: "_id", Value: "stale"}, {Key: "owner", Value: "dead"}, {Key: "token", Value: "dead-token"}, {Key: "host", Value: "gone"},
		{Key: "pid", Value: 1}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: expires},
	}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var waiting *lease.Event
	opts := s.options("taker")
	opts.Events = func(e lease.Event) {
		kinds = append(kinds, string(e.Kind))
		if e.Kind == lease.EventWaiting {
			waiting = &e
		}
	}
	h := s.acquire(t, coll, "stale", opts)
	doc := holder(t, coll, "stale")
	if at, _ := doc["acquiredAt"].(bson.DateTime); at.Time().Before(expires) {
		t.Errorf("taken over at %v by the server's clock, before the lease expired at %v", at.Time(), expires)
	}
	if doc["token"] != h.Token() || doc["owner"] != "taker" {
		t.Errorf("lease document after the takeover: %v", doc)
	}
	if got := strings.Join(kinds, " "); got != "waiting takenOver acquired" {
		t.Errorf("events %q, want waiting takenOver acquired", got)
	}
	if waiting == nil || waiting.Holder == nil || waiting.Holder.Owner != "dead" || !waiting.Holder.ExpiresAt.Equal(expires) {
		t.Errorf("the waiting event does not name the dead holder and its expiry: %+v", waiting)
	}
}

// waitingNamesHolder: a contender that gives up names the lease, its
// holder and the expiry by the server's clock, and says it is waiting.
func waitingNamesHolder(t *testing.T, s suite) {
	a := s.acquire(t, s.collection(t), "held", s.options("holder-a"))
	var msgs []string
	opts := s.options("waiter")
	opts.Wait = s.Lease / 4
	opts.Events = func(e lease.Event) { msgs = append(msgs, e.Message) }
	_, err := lease.Acquire(context.Background(), s.collection(t), "held", opts)
	var te *lease.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, lease.ErrTimeout) {
		t.Fatalf("got %v, want a *lease.TimeoutError", err)
	}
	until := "lease until " + te.Holder.ExpiresAt.UTC().Format(time.RFC3339)
	if te.Name != "held" || te.Holder.Owner != "holder-a" || !te.Holder.ExpiresAt.After(te.Holder.AcquiredAt) ||
		!strings.Contains(err.Error(), "holder-a") || !strings.Contains(err.Error(), until) {
		t.Errorf("timeout error %q (%+v)", err, te)
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "held") || !strings.Contains(msgs[0], "holder-a") || !strings.Contains(msgs[0], "lease until") {
		t.Errorf("waiting events %q: want one naming the lease, its holder and its expiry", msgs)
	}
	if err := a.Fence(context.Background()); err != nil {
		t.Errorf("the holder lost its lease to a waiter that gave up: %v", err)
	}
}

// renewalFailureFences: the holder's network is cut (its connections
// closed, new ones refused). By the time a lease has passed since, its
// fence refuses; once the network is back and another process took over,
// it still sends nothing, fence or release.
func renewalFailureFences(t *testing.T, s suite) {
	ctx := context.Background()
	d := &cutDialer{}
	m := &monitor{}
	hc := s.collection(t, options.Client().SetDialer(d), m.options())
	h := s.acquire(t, hc, "cut", s.options("partitioned"))
	cutAt := time.Now()
	d.setCut(true)
	sleepUntil(cutAt.Add(s.Lease))
	err := h.Fence(ctx)
	if !errors.Is(err, lease.ErrLost) {
		t.Fatalf("fence a lease after the network was cut for a whole lease: %v, want ErrLost", err)
	}
	// The loss says what happened: the server did not answer (it used to
	// say "another process took it over", which nobody had).
	var lost *lease.LostError
	if !errors.As(err, &lost) || lost.Reason != lease.LostUnreachable || lost.Name != "cut" ||
		!strings.Contains(err.Error(), "the server did not answer its renewal") || strings.Contains(err.Error(), "took it over") {
		t.Errorf("loss to a cut network: %v (%#v), want a LostError with reason unreachable", err, lost)
	}
	select {
	case <-h.Lost():
	default:
		t.Error("Lost is not closed after the fence refused")
	}
	d.setCut(false)
	next := s.acquire(t, s.collection(t), "cut", s.options("successor"))
	// The test's own ping (not the holder's) until the holder's client is
	// connected again, so that anything it sent now would reach the server.
	if err := hc.Database().Client().Ping(ctx, nil); err != nil {
		t.Fatalf("the holder's client does not reconnect: %v", err)
	}
	sent := len(m.started())
	if err := h.Fence(ctx); !errors.Is(err, lease.ErrLost) {
		t.Errorf("fence after another process took over: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Errorf("release of a lost lease: %v", err)
	}
	for _, e := range m.started()[sent:] {
		t.Errorf("the fenced holder sent %s: %s", e.CommandName, e.Command)
	}
	if doc := holder(t, s.collection(t), "cut"); doc == nil || doc["token"] != next.Token() {
		t.Errorf("the successor's lease document: %v", doc)
	}
	if err := next.Fence(ctx); err != nil {
		t.Errorf("the successor: %v", err)
	}
}

// forcedRemoveStopsHolder: Remove without force refuses a live lease; with
// force it removes it, and the holder's next fence refuses, for good.
func forcedRemoveStopsHolder(t *testing.T, s suite) {
	ctx := context.Background()
	m := &monitor{}
	h := s.acquire(t, s.collection(t, m.options()), "forced", s.options("holder"))
	other := s.collection(t)
	if _, err := lease.Remove(ctx, other, "forced", false); !errors.Is(err, lease.ErrLive) {
		t.Fatalf("remove a live lease without force: %v", err)
	}
	info, err := lease.Remove(ctx, other, "forced", true)
	if err != nil || info == nil || info.Owner != "holder" {
		t.Fatalf("remove --force: %v %v", info, err)
	}
	if err := h.Fence(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("fence after a forced remove: %v, want ErrLost", err)
	}
	sent := len(m.started())
	if err := h.Fence(ctx); !errors.Is(err, lease.ErrLost) {
		t.Errorf("second fence: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Error(err)
	}
	for _, e := range m.started()[sent:] {
		t.Errorf("the holder sent %s after its lease was removed", e.CommandName)
	}
	if doc := holder(t, other, "forced"); doc != nil {
		t.Errorf("a lease document came back: %v", doc)
	}
}

// tokenGuards: two acquisitions by the same owner have different tokens;
// the first, removed and replaced, can neither renew nor release the
// second's lease.
func tokenGuards(t *testing.T, s suite) {
	ctx := context.Background()
	ca, cb := s.collection(t), s.collection(t)
	a := s.acquire(t, ca, "token", s.options("same-owner"))
	if _, err := lease.Remove(ctx, cb, "token", true); err != nil {
		t.Fatal(err)
	}
	b := s.acquire(t, cb, "token", s.options("same-owner"))
	if a.Token() == b.Token() {
		t.Fatal("two acquisitions share a token")
	}
	before := holder(t, cb, "token")
	select {
	case <-a.Lost(): // its renewal matched nothing
	case <-time.After(20 * s.Lease):
		t.Fatal("the first holder never noticed that its lease was replaced")
	}
	if err := a.Release(ctx); err != nil {
		t.Error(err)
	}
	after := holder(t, cb, "token")
	if after == nil || after["token"] != b.Token() {
		t.Fatalf("the first holder's release removed or changed the second's lease: %v", after)
	}
	if after["acquiredAt"] != before["acquiredAt"] {
		t.Errorf("the lease document was replaced: %v then %v", before, after)
	}
	if err := b.Fence(ctx); err != nil {
		t.Errorf("the second holder: %v", err)
	}
}

// majorityWriteConcern: every write of the protocol (the acquiring insert,
// the takeover's delete, a renewal, the release, a forced remove) carries
// writeConcern {w: "majority"}.
func majorityWriteConcern(t *testing.T, s suite) {
	ctx := context.Background()
	m := &monitor{}
	coll := s.collection(t, m.options())
	plain := s.collection(t)
	past := serverNow(t, plain).Add(-time.Second)
	if _, err := plain.InsertOne(ctx, bson.D{{Key: "_id", Value: "wc"}, {Key: "owner", Value: "dead"}, {Key: "acquiredAt", Value: past}, {Key: "expiresAt", Value: past}}); err != nil {
		t.Fatal(err)
	}
	h := s.acquire(t, coll, "wc", s.options("holder"))
	for !sawWrite(m, s.coll, "update") {
		select {
		case <-h.Lost():
			t.Fatalf("lost before a renewal: %v", h.Err())
		case <-time.After(s.Lease / 8):
		}
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	s.acquire(t, plain, "other", s.options("someone"))
	if _, err := lease.Remove(ctx, coll, "other", true); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range m.started() {
		if !isWrite(e.CommandName) || e.Command.Lookup(e.CommandName).StringValue() != s.coll {
			continue
		}
		counts[e.CommandName]++
		if w, ok := e.Command.Lookup("writeConcern", "w").StringValueOK(); !ok || w != "majority" {
			t.Errorf("%s without majority write concern: %s", e.CommandName, e.Command)
		}
	}
	// insert (acquire), delete (takeover, release, remove), update (renewal)
	if counts["insert"] < 1 || counts["delete"] < 3 || counts["update"] < 1 {
		t.Errorf("lease writes seen %v: the check missed some", counts)
	}
}

func isWrite(name string) bool { return name == "insert" || name == "update" || name == "delete" }

func sawWrite(m *monitor, coll, name string) bool {
	for _, e := range m.started() {
		if e.CommandName == name && e.Command.Lookup(name).StringValue() == coll {
			return true
		}
	}
	return false
}
