package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func stop(t *testing.T, s *sandbox.Server, c *mongo.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sandbox.StopTimeout)
	defer cancel()
	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestPersistsAcrossRestart starts a server in a directory, writes, stops it,
// starts a new one in the same directory and reads the data back.
func TestPersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "data")

	s1, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s1.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", s1.Dir(), dir)
	}
	c1 := connect(t, s1.URI())
	if _, err := c1.Database("app").Collection("users").InsertOne(ctx, bson.D{{Key: "_id", Value: "ada"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	stop(t, s1, c1)
	if _, err := os.Stat(filepath.Join(dir, "app.sqlite")); err != nil {
		t.Fatalf("expected app.sqlite in the sandbox directory: %v", err)
	}
	// A second Stop is harmless.
	if err := s1.Stop(ctx); err != nil {
		t.Fatalf("second stop: %v", err)
	}

	s2, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s2.URI() == "" {
		t.Fatal("empty URI")
	}
	c2 := connect(t, s2.URI())
	defer stop(t, s2, c2)
	var got bson.M
	if err := c2.Database("app").Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: "ada"}}).Decode(&got); err != nil {
		t.Fatalf("data did not survive the restart: %v", err)
	}
	if got["n"] != int32(1) {
		t.Errorf("n = %v (%T), want int32 1", got["n"], got["n"])
	}
}

// TestTemporaryIsFresh checks that two servers without a directory share
// nothing, and that updates work (they hang in FerretDB's in-memory mode,
// which the sandbox therefore does not use).
func TestTemporaryIsFresh(t *testing.T) {
	ctx := context.Background()
	db1 := sandboxtest.Database(t, "app")
	res, err := db1.Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db1.Collection("c").UpdateOne(uctx, bson.D{{Key: "_id", Value: res.InsertedID}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}); err != nil {
		t.Fatalf("update after insert: %v", err)
	}
	db2 := sandboxtest.Database(t, "app")
	n, err := db2.Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second in-memory server sees %d documents of the first", n)
	}
}

// TestStopIsQuickAfterDisconnect guards the shutdown path: a server whose
// clients disconnected must stop well within StopTimeout (a hang fails here
// by deadline, not by a wall-clock assertion on speed).
func TestStopIsQuickAfterDisconnect(t *testing.T) {
	s, err := sandbox.Start(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	c := connect(t, s.URI())
	if err := c.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = c.Disconnect(ctx)
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s not removed on Stop: %v", dir, err)
	}
}
