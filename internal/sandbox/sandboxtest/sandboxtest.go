// Package sandboxtest gives tests a fresh embedded server and a connected
// client, torn down when the test ends.
package sandboxtest

import (
	"context"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// Start starts a server in a temporary directory for t and stops it when t
// ends.
func Start(t testing.TB) *sandbox.Server {
	t.Helper()
	return StartIn(t, "")
}

// StartIn starts a server storing its data in dir ("" for a temporary one) and
// stops it when t ends.
func StartIn(t testing.TB, dir string) *sandbox.Server {
	t.Helper()
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sandbox.StopTimeout)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop sandbox: %v", err)
		}
	})
	return s
}

// Connect connects a client to uri with extra client options applied last,
// and disconnects it when t ends (before the server stops, since cleanups
// run in reverse order).
func Connect(t testing.TB, uri string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	all := append([]*options.ClientOptions{options.Client().ApplyURI(uri)}, opts...)
	c, err := mongo.Connect(all...)
	if err != nil {
		t.Fatalf("connect %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// Database starts a fresh server and returns a database on it
// named name.
func Database(t testing.TB, name string) *mongo.Database {
	t.Helper()
	s := Start(t)
	return Connect(t, s.URI()).Database(name)
}

// MongoDB returns database name on the real MongoDB named by
// MONGOMIG_TEST_URI, dropped before the test and after it. Without the
// variable the test is skipped with why, which names what the sandbox test
// covers instead.
func MongoDB(t testing.TB, name, why string) *mongo.Database {
	t.Helper()
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: " + why)
	}
	db := Connect(t, uri).Database(name)
	_ = db.Drop(context.Background())
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	return db
}

// InDir starts a server on dir, hands fn its database name, and stops it:
// for tests that prepare or inspect a sandbox directory a command uses.
func InDir(t testing.TB, dir, name string, fn func(db *mongo.Database)) {
	t.Helper()
	ctx := context.Background()
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop(ctx) }()
	c, err := mongo.Connect(options.Client().ApplyURI(s.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Disconnect(ctx) }()
	fn(c.Database(name))
}
