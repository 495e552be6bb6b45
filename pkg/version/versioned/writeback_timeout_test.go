package versioned_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// pausable is a fresh sandbox whose update commands are held, before
// the server sees them, while hold says so (the sandbox's test hook):
// a server that does not answer in time, genuinely, for the client's
// timeouts. Held commands are let go when the test ends.
type pausable struct {
	mu      sync.Mutex
	hold    func(i int) bool // i: the update command's number, from 0
	updates int
	release chan struct{}
}

func pausedDatabase(t *testing.T, rec *recorder, hold func(i int) bool) (*mongo.Database, *pausable) {
	t.Helper()
	srv := sandboxtest.Start(t)
	p := &pausable{hold: hold, release: make(chan struct{})}
	testhook.Set(srv, func(point string, _ int64, _ int) {
		if point != "sandbox.update" {
			return
		}
		p.mu.Lock()
		i := p.updates
		p.updates++
		p.mu.Unlock()
		if p.hold(i) {
			<-p.release
		}
	})
	t.Cleanup(func() { testhook.Set(srv, nil); p.let() }) // before the server stops
	opts := options.Client()
	if rec != nil {
		opts.SetMonitor(rec.monitor())
	}
	return sandboxtest.Connect(t, srv.URI(), opts).Database("app"), p
}

var letOnce sync.Map

func (p *pausable) let() {
	if _, done := letOnce.LoadOrStore(p, true); !done {
		close(p.release)
	}
}

// oldUsers stores n users at version 0 and returns them as read.
func oldUsers(t *testing.T, coll *mongo.Collection, n int) []bson.Raw {
	t.Helper()
	docs := make([]any, n)
	raws := make([]bson.Raw, n)
	for i := range docs {
		d := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}}
		docs[i], raws[i] = d, mustMarshal(t, d)
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return raws
}

func updateSizes(rec *recorder) []int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var sizes []int
	for _, cmd := range rec.docs {
		updates, _ := cmd.Lookup("updates").Array().Values()
		sizes = append(sizes, len(updates))
	}
	return sizes
}

// TestDeferredRetriesATimedOutBulkWrite: the server holds the first bulk
// write of 10 write-backs past its Timeout. The queue used to count the
// whole batch as failed (the Failed 246 to 494 on a loaded
// FerretDB) and keep sending batches of the same size; now it halves the
// size, sends the same write-backs again in two bulk writes of 5, then
// grows the size by one per answered bulk write: all 30 are written,
// none failed.
func TestDeferredRetriesATimedOutBulkWrite(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	db, p := pausedDatabase(t, rec, func(i int) bool { return i == 0 })
	raw := db.Collection("users")
	docs := oldUsers(t, raw, 30)
	var mu sync.Mutex
	var timedOut []versioned.Event
	users := versioned.New(raw, registry(t),
		versioned.WithDeferred(versioned.DeferredOptions{Queue: 100, Batch: 50, Interval: -1, Timeout: 2 * time.Second}),
		versioned.WithObserver(func(e versioned.Event) {
			if e.Kind == versioned.TimedOut {
				mu.Lock()
				timedOut = append(timedOut, e)
				mu.Unlock()
			}
		}))
	var u User
	for _, d := range docs {
		if err := users.Decode(ctx, d, &u); err != nil {
			t.Fatal(err)
		}
	}
	if err := users.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	p.let() // the held bulk write now reaches the server: it matches nothing
	if len(timedOut) != 1 || timedOut[0].Count != 10 || timedOut[0].Batch != 5 || !mongo.IsTimeout(timedOut[0].Err) {
		t.Errorf("TimedOut events %+v, want one of 10 updates, the size halved to 5", timedOut)
	}
	if got, want := updateSizes(rec), []int{10, 5, 5, 6, 7, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("bulk writes of %v updates, want %v (10 held, then 5+5 again, then growing by one)", got, want)
	}
	s := users.Stats()
	if s.Written != 30 || s.Lost != 0 || s.Failed != 0 || s.Timeouts != 1 || s.Retried != 10 || s.Batch != 8 {
		t.Errorf("stats %+v, want all 30 written after one timeout and 10 retries", s)
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(3)}}); n != 30 {
		t.Errorf("%d users stored upgraded, want 30", n)
	}
}

// TestDeferredRetriesAreBounded: a server that never answers in time.
// Each write-back is sent at most three times, then counted as failed;
// Close returns an *UnwrittenError counting them (their last bulk write
// got no answer, so the server may have applied them).
func TestDeferredRetriesAreBounded(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	db, _ := pausedDatabase(t, rec, func(int) bool { return true })
	raw := db.Collection("users")
	docs := oldUsers(t, raw, 2)
	users := versioned.New(raw, registry(t),
		versioned.WithDeferred(versioned.DeferredOptions{Batch: 2, Interval: -1, Timeout: 200 * time.Millisecond}))
	var u User
	for _, d := range docs {
		if err := users.Decode(ctx, d, &u); err != nil {
			t.Fatal(err)
		}
	}
	err := users.Close(ctx)
	var ue *versioned.UnwrittenError
	if !errors.As(err, &ue) || ue.Count != 2 || ue.Unconfirmed != 2 || len(ue.IDs) != 2 || !mongo.IsTimeout(err) {
		t.Fatalf("Close: %v, want an UnwrittenError of the 2 write-backs, both unconfirmed", err)
	}
	// One bulk write of both, then each alone twice more.
	if got, want := updateSizes(rec), []int{2, 1, 1, 1, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("bulk writes of %v updates, want %v", got, want)
	}
	if s := users.Stats(); s.Failed != 2 || s.Written != 0 || s.Timeouts != 5 || s.Retried != 4 || s.Batch != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestCloseHonoursItsDeadline: the server holds every bulk write, each
// bounded by a Timeout of an hour; Close's context ends first. Close used
// to return the bare context error while its goroutine went on holding
// the write-backs (an hour, here), reporting nothing of them; now it
// abandons the bulk write in flight, sends nothing more, and returns an
// *UnwrittenError naming all 25 write-backs, the 10 in flight among them
// as unconfirmed.
func TestCloseHonoursItsDeadline(t *testing.T) {
	ctx := context.Background()
	db, _ := pausedDatabase(t, nil, func(int) bool { return true })
	raw := db.Collection("users")
	docs := oldUsers(t, raw, 25)
	users := versioned.New(raw, registry(t),
		versioned.WithDeferred(versioned.DeferredOptions{Batch: 50, Interval: -1, Timeout: time.Hour}))
	var u User
	for _, d := range docs {
		if err := users.Decode(ctx, d, &u); err != nil {
			t.Fatal(err)
		}
	}
	for users.Stats().Bulks == 0 { // until the first bulk write (10) is in flight
		time.Sleep(time.Millisecond)
	}
	deadline, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := users.Close(deadline)
	var ue *versioned.UnwrittenError
	if !errors.As(err, &ue) || ue.Count != 25 || ue.Unconfirmed != 10 || len(ue.IDs) != 10 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want an UnwrittenError of all 25 write-backs (10 unconfirmed) wrapping the deadline", err)
	}
	if s := users.Stats(); s.Failed != 25 || s.Written != 0 || s.Bulks != 1 {
		t.Errorf("stats %+v: want one bulk write sent, every write-back failed", s)
	}
	if again := users.Close(ctx); again != err {
		t.Errorf("a second Close: %v, want the first one's result", again)
	}
}
