package runner_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// lateFS: 0001 creates the unique email_1 that 0003 drops.
var lateFS = fstest.MapFS{
	"0001_email.yaml":   {Data: []byte("collections:\n  users:\n    indexes:\n      create:\n        - {keys: {email: 1}, unique: true}\n")},
	"0002_name.yaml":    {Data: []byte("collections:\n  users:\n    indexes:\n      create:\n        - {keys: {name: 1}}\n")},
	"0003_drop.yaml":    {Data: []byte("collections:\n  users:\n    indexes:\n      drop: [email_1]\n")},
	"0004_created.yaml": {Data: []byte("collections:\n  users:\n    indexes:\n      create:\n        - {keys: {createdAt: 1}}\n")},
}

// pausable is a client whose runner can be paused right after a fence as
// SIGSTOP would: its goroutine waits in the hook, and its lease's
// heartbeat waits in the command monitor before each renewal.
type pausable struct {
	paused           atomic.Bool
	reached, release chan struct{}
	once             sync.Once
}

func newPausable() *pausable {
	return &pausable{reached: make(chan struct{}), release: make(chan struct{})}
}

func (p *pausable) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if p.paused.Load() && e.CommandName == "update" && e.Command.Lookup("update").StringValue() == runner.DefaultLockCollection {
			<-p.release
		}
	}}
}

// pause stops the holder until resume.
func (p *pausable) pause() {
	p.paused.Store(true)
	close(p.reached)
	<-p.release
}

func (p *pausable) resume() { p.once.Do(func() { close(p.release) }) }

// logged collects a runner's entries.
type logged struct {
	mu      sync.Mutex
	entries []events.Entry
}

func (l *logged) Log(e events.Entry) { l.mu.Lock(); l.entries = append(l.entries, e); l.mu.Unlock() }

func (l *logged) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.entries {
		out = append(out, e.Kind())
	}
	return out
}

// TestLateCommandAfterTakeoverIsReportedAndUndone: a
// holder paused right after the fence of 0001's createIndexes email_1 (its
// goroutine and heartbeat blocked, what SIGSTOP leaves) loses the lock to a
// second runner, which applies 0001..0004, 0003 dropping email_1. Resumed,
// the first sends its createIndexes after all. It used to stop with "lock
// lost" only, leaving a unique index that 0003 dropped while the ledger
// said 1..4 with nothing pending: its error and result must now say that
// the command was sent after the loss, and it takes the lock again and
// drops email_1, as the applied migrations declare.
func TestLateCommandAfterTakeoverIsReportedAndUndone(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	p := newPausable()
	defer p.resume()
	dbA := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(p.monitor())).Database("app")
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	log := &logged{}
	a := newRunner(t, dbA, lateFS, runner.WithLockLease(time.Second), runner.WithLogger(log))
	runner.SetHook(a, func(point string, v int64, i int) {
		if point == "fenced" && v == 1 {
			p.pause()
		}
	})
	var aErr error
	done := make(chan struct{})
	go func() { defer close(done); _, aErr = a.Up(ctx) }()
	<-p.reached
	// The second runner waits for the paused lease to expire, takes it
	// over and applies everything.
	b := newRunner(t, db, lateFS)
	if _, err := b.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if indexNames(t, db.Collection("users"))["email_1"] {
		t.Fatal("0003 did not drop email_1")
	}
	p.resume()
	<-done
	var pe *runner.PartialError
	if !errors.As(aErr, &pe) || !pe.SentAfterLoss || !errors.Is(aErr, runner.ErrLockLost) || !strings.Contains(aErr.Error(), "createIndexes email_1 was sent after the lease was lost") {
		t.Fatalf("the resumed holder: %v; want a PartialError saying createIndexes email_1 was sent after the lease was lost", aErr)
	}
	if last := pe.Done[len(pe.Done)-1]; !last.SentAfterLoss || last.Index != "email_1" {
		t.Errorf("the result of the late command: %+v", last)
	}
	if indexNames(t, db.Collection("users"))["email_1"] {
		t.Errorf("email_1, dropped by the applied 0003, is back; log: %v", log.kinds())
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Errorf("ledger = %v", v)
	}
	if !containsKinds(log.kinds(), "state.checking", "state.differs", "state.reasserted", "state.matches") {
		t.Errorf("log: %v", log.kinds())
	}
}

func containsKinds(have []string, want ...string) bool {
	i := 0
	for _, k := range have {
		if i < len(want) && k == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestTakeoverPutsTheDeclaredStateBack: a holder that
// takes over an expired migration lock compares the server with what the
// applied migrations declare before it applies more. Here the expired
// holder (a paused process) brought email_1 back after 0003 had dropped it
// and name_1 is gone: the taker drops email_1 and creates name_1 again,
// each logged, before it applies 0004.
func TestTakeoverPutsTheDeclaredStateBack(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	first := fstest.MapFS{}
	for k, v := range lateFS {
		if k != "0004_created.yaml" {
			first[k] = v
		}
	}
	if _, err := newRunner(t, db, first).Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	if _, err := users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true).SetName("email_1")}); err != nil {
		t.Fatal(err)
	}
	if err := users.Indexes().DropOne(ctx, "name_1"); err != nil {
		t.Fatal(err)
	}
	// An expired migration lock, as a paused holder leaves it.
	past := time.Now().Add(-time.Hour)
	if _, err := db.Collection(runner.DefaultLockCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "paused"}, {Key: "token", Value: "t"},
		{Key: "host", Value: "h"}, {Key: "pid", Value: 1}, {Key: "acquiredAt", Value: past}, {Key: "expiresAt", Value: past}}); err != nil {
		t.Fatal(err)
	}
	log := &logged{}
	if _, err := newRunner(t, db, lateFS, runner.WithLogger(log)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	idx := indexNames(t, users)
	if idx["email_1"] || !idx["name_1"] || !idx["createdAt_1"] {
		t.Errorf("indexes after the takeover: %v; want name_1 and createdAt_1, not email_1", idx)
	}
	var differs []string
	for _, e := range log.entries {
		if d, ok := e.(events.StateDiffers); ok {
			differs = append(differs, d.String())
		}
	}
	if len(differs) != 2 || !containsKinds(log.kinds(), "lock.takenOver", "state.checking", "state.reasserted", "state.reasserted", "state.matches", "migration.start") {
		t.Errorf("differences %q; log %v", differs, log.kinds())
	}
}

// TestFallbackCommandsAreFenced: create falls back to
// collMod when the collection exists (and, where the server refuses
// validators, to a plain create). Those fallbacks used to be sent with no
// fence at all. Here the collection appears, and an operator forces the
// lock away, between the fence of 0001's create and its send: the create
// is answered with an error, and no second command may follow it.
func TestFallbackCommandsAreFenced(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	rec := &cmdlog.Recorder{}
	dbA := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	fsys := fstest.MapFS{"0001_users.yaml": {Data: []byte("collections:\n  users:\n    validator: {$jsonSchema: {bsonType: object, required: [name]}}\n")}}
	a := newRunner(t, dbA, fsys)
	sent := -1
	runner.SetHook(a, func(point string, v int64, i int) {
		if point != "fenced" || v != 1 {
			return
		}
		if err := db.CreateCollection(ctx, "users"); err != nil {
			t.Error(err)
		}
		if _, err := newRunner(t, db, fsys).Unlock(ctx, true); err != nil {
			t.Error(err)
		}
		sent = len(rec.Named("create")) + len(rec.Named("collMod"))
	})
	_, err := a.Up(ctx)
	if !errors.Is(err, runner.ErrLockLost) {
		t.Fatalf("up: %v; want the lock lost", err)
	}
	if n := len(rec.Named("create")) + len(rec.Named("collMod")) - sent; sent < 0 || n != 1 {
		t.Errorf("%d create/collMod commands sent after the fence (%d before it): want only the fenced one, no unfenced fallback", n, sent)
	}
}

// TestTakeoverFindsTheDeclaredStateMongoDB: on a server that keeps
// validators, a takeover after an up that ran to its end finds every
// validator, level, action and index as the files declare (listCollections
// answers the validator as it was sent, MongoDB's
// src/mongo/db/catalog/collection_options.cpp keeps it as given) and sends
// nothing; with one validator rolled back by hand, it sends that one back.
func TestTakeoverFindsTheDeclaredStateMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_takeover", "the takeover's check of validators needs a server that keeps them (TestTakeoverPutsTheDeclaredStateBack checks indexes on the sandbox)")
	ctx := context.Background()
	fsys, refused := fixtures.EnforceableSamples(t, db)
	// A collection whose schema still uses a keyword the server does not
	// enforce is client-side only, asked (up refuses it otherwise).
	clientSide := runner.WithClientSideValidators(slices.Sorted(maps.Keys(refused))...)
	if _, err := newRunner(t, db, fsys, clientSide).Up(ctx); err != nil {
		t.Fatal(err)
	}
	expire := func() {
		past := time.Now().Add(-time.Hour)
		if _, err := db.Collection(runner.DefaultLockCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "paused"}, {Key: "token", Value: "t"},
			{Key: "host", Value: "h"}, {Key: "pid", Value: 1}, {Key: "acquiredAt", Value: past}, {Key: "expiresAt", Value: past}}); err != nil {
			t.Fatal(err)
		}
	}
	differs := func(log *logged) []string {
		var out []string
		for _, e := range log.entries {
			if d, ok := e.(events.StateDiffers); ok {
				out = append(out, d.String())
			}
		}
		return out
	}
	expire()
	log := &logged{}
	if _, err := newRunner(t, db, fsys, clientSide, runner.WithLogger(log)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	if d := differs(log); len(d) != 0 || !containsKinds(log.kinds(), "state.checking", "state.matches") {
		t.Fatalf("a takeover after a complete up: differences %q, log %v", d, log.kinds())
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "users"}, {Key: "validator", Value: bson.D{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	expire()
	log = &logged{}
	if _, err := newRunner(t, db, fsys, clientSide, runner.WithLogger(log)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	if d := differs(log); len(d) != 1 || !strings.HasPrefix(d[0], "users: the validator") {
		t.Errorf("after the users validator was removed by hand: differences %q", d)
	}
}
