package versioned_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// TestSyncWriteBack: a read with the Sync policy stores the upgrade before
// it returns, exactly as a backfill would (Registry.Upgrade of the stored
// document), with one guarded update per old document.
func TestSyncWriteBack(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	raw := database(t, rec).Collection("users")
	ids := newIDs()
	docs := mixed(ids)
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	reg := registry(t)
	var events []versioned.Event
	users := versioned.New(raw, reg, versioned.WithWriteBack(versioned.Sync),
		versioned.WithObserver(func(e versioned.Event) { events = append(events, e) }))
	cur, err := users.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var all []User
	if err := cur.All(ctx, &all); err != nil || len(all) != 4 {
		t.Fatal(len(all), err)
	}
	for i, id := range ids {
		want, _, _ := reg.Upgrade("users", docs[i].(bson.D))
		if got := storedD(t, raw, id); !sameFields(got, want) {
			t.Errorf("version %d stored as %v, a backfill makes %v", i, got, want)
		}
	}
	if n := rec.count("update"); n != 3 {
		t.Errorf("%d updates for 3 old documents", n)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, fmt.Sprintf("%s %d->%d won=%v", e.Kind, e.From, e.To, e.Won))
	}
	want := []string{"upgraded 0->3 won=false", "wrote-back 0->3 won=true", "upgraded 1->3 won=false", "wrote-back 1->3 won=true", "upgraded 2->3 won=false", "wrote-back 2->3 won=true"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
	if s := users.Stats(); s.Upgraded != 3 || s.Written != 3 || s.Lost != 0 {
		t.Errorf("stats %+v", s)
	}
}

// sameFields compares documents field by field, in any order (a write-back
// appends new fields where $set puts them).
func sameFields(a, b bson.D) bool {
	if len(a) != len(b) {
		return false
	}
	for _, e := range a {
		x, _ := bson.Marshal(bson.D{{Key: "v", Value: e.Value}})
		y, _ := bson.Marshal(bson.D{{Key: "v", Value: lookup(b, e.Key)}})
		if string(x) != string(y) {
			return false
		}
	}
	return true
}

// writer is another process's update, landing between a read and its
// write-back: it runs from the observer's Upgraded event, which the
// wrapper reports before writing back (a deterministic interleaving:
// FerretDB does not make the guarded update atomic under true
// concurrency, MongoDB does).
type writer struct {
	coll   *mongo.Collection
	update bson.D
	once   sync.Once
	err    error
}

func (w *writer) observe(e versioned.Event) {
	if e.Kind == versioned.Upgraded {
		w.once.Do(func() {
			_, w.err = w.coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: e.ID}}, w.update)
		})
	}
}

// TestWriteBackNeverErasesAConcurrentWrite: another writer's update lands
// between the read and the write-back. When it changed a field the
// upgrade writes (status), the write-back loses and the change stands;
// when it changed a field the upgrade leaves alone (a new field), the
// write-back wins and the change stands too; when a server-side backfill
// step left its marker, the write-back loses. Both for Sync and Deferred.
func TestWriteBackNeverErasesAConcurrentWrite(t *testing.T) {
	for _, policy := range []versioned.Policy{versioned.Sync, versioned.Deferred} {
		for _, tc := range []struct {
			name   string
			update bson.D
			won    bool
			check  func(d bson.D) bool
		}{
			{"upgraded field", bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}, false,
				func(d bson.D) bool { return lookup(d, "status") == "suspended" && lookup(d, "version") == nil }},
			{"untouched field", bson.D{{Key: "$set", Value: bson.D{{Key: "note", Value: "vip"}}}}, true,
				func(d bson.D) bool { return lookup(d, "note") == "vip" && lookup(d, "version") == int32(3) }},
			// A server-side backfill's first unit ran since the read: it
			// leaves the step marker (version.MarkerField), which every
			// write-back guards.
			{"step marker", bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: int32(1)}}}}, false,
				func(d bson.D) bool { return lookup(d, version.MarkerField) != nil && lookup(d, "version") == nil }},
		} {
			t.Run(fmt.Sprintf("%s/%s", policy, tc.name), func(t *testing.T) {
				ctx := context.Background()
				raw := database(t, nil).Collection("users")
				ids := newIDs()
				if _, err := raw.InsertOne(ctx, mixed(ids)[0]); err != nil {
					t.Fatal(err)
				}
				w := &writer{coll: raw, update: tc.update}
				users := versioned.New(raw, registry(t), versioned.WithWriteBack(policy), versioned.WithObserver(w.observe))
				var u User
				if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[0]}}).Decode(&u); err != nil || u.Status != "active" {
					t.Fatalf("read %+v, %v", u, err)
				}
				if err := users.Close(ctx); err != nil || w.err != nil {
					t.Fatal(err, w.err)
				}
				if d := storedD(t, raw, ids[0]); !tc.check(d) {
					t.Errorf("stored %v: the writer's change was erased or the write-back did not run as it should", d)
				}
				s := users.Stats()
				if tc.won && (s.Written != 1 || s.Lost != 0) || !tc.won && (s.Written != 0 || s.Lost != 1) {
					t.Errorf("stats %+v, want won=%v", s, tc.won)
				}
			})
		}
	}
}

// TestDeferredFlushesOnCloseInBatches: 120 old documents read with
// Batch 50 (partial batches only at Close) make bulk writes of 10, 20,
// 40 and 50 updates (the size starts small and doubles while the server
// answers, up to Batch), and every document is stored upgraded.
func TestDeferredFlushesOnCloseInBatches(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	raw := database(t, rec).Collection("users")
	const n = 120
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}}
	}
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t), versioned.WithDeferred(versioned.DeferredOptions{Queue: 2 * n, Batch: 50, Interval: -1}))
	cur, err := users.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var all []User
	if err := cur.All(ctx, &all); err != nil || len(all) != n {
		t.Fatal(len(all), err)
	}
	if err := users.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, cmd := range rec.docs {
		if ordered, _ := cmd.Lookup("ordered").BooleanOK(); ordered {
			t.Errorf("an ordered bulk write: %s", cmd)
		}
		updates, _ := cmd.Lookup("updates").Array().Values()
		sizes = append(sizes, len(updates))
	}
	if want := []int{10, 20, 40, 50}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("bulk writes of %v updates for %d write-backs with Batch 50, want %v", sizes, n, want)
	}
	if c, err := raw.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(3)}}); err != nil || c != n {
		t.Errorf("%d documents at version 3 after Close, want %d (%v)", c, n, err)
	}
	if s := users.Stats(); s.Queued != n || s.Written != n || s.Bulks != 4 || s.Dropped != 0 || s.Batch != 50 {
		t.Errorf("stats %+v", s)
	}
	// After Close, reads still work; their write-backs are dropped.
	var u User
	if err := users.Decode(ctx, mustMarshal(t, docs[0]), &u); err != nil || users.Stats().Dropped != 1 {
		t.Errorf("a read after Close: %v, stats %+v", err, users.Stats())
	}
}

func mustMarshal(t *testing.T, v any) bson.Raw {
	t.Helper()
	raw, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestDeferredQueueIsBounded: while the queue's goroutine is held inside
// a bulk write's report, reads go on without waiting: Queue of them are
// accepted, the rest dropped and counted; Close then writes the accepted
// ones.
func TestDeferredQueueIsBounded(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	const n = 10
	docs := make([]bson.Raw, n)
	for i := range docs {
		d := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)}}
		if _, err := raw.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
		docs[i] = mustMarshal(t, d)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var dropped []any
	users := versioned.New(raw, registry(t),
		versioned.WithDeferred(versioned.DeferredOptions{Queue: 2, Batch: 1, Interval: -1}),
		versioned.WithObserver(func(e versioned.Event) {
			switch e.Kind {
			case versioned.Flushed:
				once.Do(func() { close(held); <-release })
			case versioned.Dropped:
				dropped = append(dropped, e.ID) // the reading goroutine: this test's
			}
		}))
	var u User
	if err := users.Decode(ctx, docs[0], &u); err != nil {
		t.Fatal(err)
	}
	<-held // the goroutine sent the first write-back and is held
	for _, d := range docs[1:] {
		if err := users.Decode(ctx, d, &u); err != nil {
			t.Fatal(err)
		}
	}
	if s := users.Stats(); s.Queued != 3 || s.Dropped != n-3 || len(dropped) != n-3 {
		t.Errorf("while held: stats %+v, %d Dropped events; want 3 queued (1 sent, 2 waiting), %d dropped", s, len(dropped), n-3)
	}
	close(release)
	if err := users.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := users.Stats(); s.Written != 3 || s.Bulks != 3 {
		t.Errorf("after Close: stats %+v, want the 3 accepted written", s)
	}
	if c, _ := raw.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(3)}}); c != 3 {
		t.Errorf("%d documents stored upgraded, want 3", c)
	}
}

// TestDeferredUnderLoad: concurrent readers of the same old documents;
// every upgrade is either queued or dropped, and every queued write-back
// is written, lost, or coalesced with one in the same batch.
func TestDeferredUnderLoad(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	const docsN, readers, reads = 40, 4, 100
	docs := make([]bson.Raw, docsN)
	for i := range docs {
		d := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)}, {Key: "email", Value: "x@example.com"}}
		if _, err := raw.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
		docs[i] = mustMarshal(t, d)
	}
	users := versioned.New(raw, registry(t), versioned.WithDeferred(versioned.DeferredOptions{Queue: 16, Batch: 10, Interval: time.Millisecond}))
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			var u User
			for i := range reads {
				if err := users.Decode(ctx, docs[(r*reads+i)%docsN], &u); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := users.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := users.Stats()
	if s.Upgraded != readers*reads || s.Queued+s.Dropped != s.Upgraded {
		t.Errorf("stats %+v: every upgrade must be queued or dropped", s)
	}
	if s.Written+s.Lost+s.Coalesced+s.Failed != s.Queued || s.Failed != 0 {
		t.Errorf("stats %+v: every queued write-back must be accounted for", s)
	}
	if s.Written > docsN {
		t.Errorf("stats %+v: more write-backs won than documents", s)
	}
	t.Logf("stats %+v", s)
}
