// Package leasetest is a conformance suite for the lease protocol of
// package lease, in the spirit of goose's lock/locktesting: [Run] takes a
// *testing.T and a way to connect to a server, so that any server
// (the embedded sandbox, a MongoDB replica set, a sharded cluster) can be
// checked against the invariants the lease package documents.
//
// Each case uses a fresh collection of [Server.Database], dropped when it
// ends. The contention case runs [Rounds] rounds (MONGOMIG_LEASE_ROUNDS,
// default 3).
package leasetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
)

// Server is how the suite reaches the server under test.
type Server struct {
	// Connect returns a new client with opts applied after the server's
	// own (the suite sets a dialer and a command monitor), disconnected
	// when t ends.
	Connect func(t *testing.T, opts ...*options.ClientOptions) *mongo.Client
	// Database is where the suite creates its collections.
	Database string
	// Lease is the lease the cases use (default 1s).
	Lease time.Duration
}

// Contenders is the number of goroutines, each with its own client, that
// contend for one lease in every round of the contention case.
const Contenders = 5

// Rounds is MONGOMIG_LEASE_ROUNDS, or 3.
func Rounds() int {
	if n, err := strconv.Atoi(os.Getenv("MONGOMIG_LEASE_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// Run runs every case of the suite as a subtest of t.
func Run(t *testing.T, s Server) {
	if s.Lease <= 0 {
		s.Lease = time.Second
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s suite)
	}{
		{"OneHolderAtATime", oneHolderAtATime},
		{"StaleTakenOverOnlyAfterExpiry", staleTakenOver},
		{"WaitingNamesHolderAndExpiry", waitingNamesHolder},
		{"RenewalFailureFences", renewalFailureFences},
		{"HoldCauseNamesTheLoss", holdCauseNamesTheLoss},
		{"ForcedRemoveStopsHolder", forcedRemoveStopsHolder},
		{"TokenGuardsAnotherAcquisition", tokenGuards},
		{"MajorityWriteConcern", majorityWriteConcern},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newSuite(t, s)) })
	}
}

// suite is one case's view of the server: a fresh collection name.
type suite struct {
	Server
	coll string
}

func newSuite(t *testing.T, s Server) suite {
	name := fmt.Sprintf("leasetest_%x", rand.Uint64())
	admin := s.Connect(t)
	t.Cleanup(func() { _ = admin.Database(s.Database).Collection(name).Drop(context.Background()) })
	return suite{Server: s, coll: name}
}

// collection connects a new client and returns the case's collection
// through it.
func (s suite) collection(t *testing.T, opts ...*options.ClientOptions) *mongo.Collection {
	return s.Connect(t, opts...).Database(s.Database).Collection(s.coll)
}

func (s suite) options(owner string) lease.Options {
	return lease.Options{Lease: s.Lease, Wait: time.Minute, Owner: owner}
}

// acquire takes name or fails the test.
func (s suite) acquire(t *testing.T, coll *mongo.Collection, name string, opts lease.Options) *lease.Held {
	t.Helper()
	h, err := lease.Acquire(context.Background(), coll, name, opts)
	if err != nil {
		t.Fatalf("acquire %s: %v", name, err)
	}
	t.Cleanup(func() { _ = h.Release(context.Background()) })
	return h
}

// monitor records the commands a client starts.
type monitor struct {
	mu   sync.Mutex
	cmds []*event.CommandStartedEvent
}

func (m *monitor) options() *options.ClientOptions {
	return options.Client().SetMonitor(&event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.cmds = append(m.cmds, e)
	}})
}

// started returns the commands started so far.
func (m *monitor) started() []*event.CommandStartedEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*event.CommandStartedEvent(nil), m.cmds...)
}

// cutDialer dials normally until cut: then it closes every connection it
// made and refuses new ones, as a network partition would, until restored.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
	d     net.Dialer
}

func (c *cutDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, errors.New("leasetest: the network is cut")
	}
	conn, err := c.d.DialContext(ctx, network, addr)
	if err == nil {
		c.conns = append(c.conns, conn)
	}
	return conn, err
}

func (c *cutDialer) setCut(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for _, conn := range c.conns {
			_ = conn.Close()
		}
		c.conns = nil
	}
}

// holder reads the lease document name (nil if none).
func holder(t *testing.T, coll *mongo.Collection, name string) bson.M {
	t.Helper()
	var doc bson.M
	err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: name}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// serverNow is the server's clock.
func serverNow(t *testing.T, coll *mongo.Collection) time.Time {
	t.Helper()
	now, err := lease.ServerTime(context.Background(), coll.Database())
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// sleepUntil sleeps until the local monotonic instant at.
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }
