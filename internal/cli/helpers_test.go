package cli

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// holdLock writes a live lock of another process into the sandbox in dir.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	srv, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(ctx) }()
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(ctx) }()
	_, err = client.Database("app").Collection("mongomig_lock").InsertOne(ctx, bson.D{
		{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "other-process"}, {Key: "host", Value: "elsewhere"}, {Key: "pid", Value: 7},
		{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
}
