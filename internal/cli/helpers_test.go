package cli

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// holdLock writes a live lock of another process into the sandbox in dir.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		_, err := db.Collection("mongomig_lock").InsertOne(context.Background(), bson.D{
			{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "other-process"}, {Key: "host", Value: "elsewhere"}, {Key: "pid", Value: 7},
			{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: time.Now().Add(time.Hour)},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
