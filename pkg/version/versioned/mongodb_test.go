package versioned_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// TestConcurrentWriterOnMongoDB races, truly concurrently, Sync
// write-backs of version 0 users against another writer's $set of the
// field the upgrade defaults (status): whichever lands first, the writer's
// value must survive. This rests on MongoDB's per-document atomicity of a
// conditional update, which the sandbox (FerretDB) does not give;
// TestWriteBackNeverErasesAConcurrentWrite checks the same on the sandbox
// with the writer placed between the read and the write-back.
func TestConcurrentWriterOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_versioned", "no real MongoDB for truly concurrent write-backs (TestWriteBackNeverErasesAConcurrentWrite covers the interleaving on the sandbox)")
	ctx := context.Background()
	raw := db.Collection("users")
	const n = 300
	ids := make([]bson.ObjectID, n)
	docs := make([]any, n)
	for i := range ids {
		ids[i] = bson.NewObjectID()
		docs[i] = bson.D{{Key: "_id", Value: ids[i]}, {Key: "name", Value: fmt.Sprintf("User %d", i)}, {Key: "email", Value: "u@example.com"}}
	}
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t), versioned.WithWriteBack(versioned.Sync))
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, id := range ids {
			var u User
			if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for _, id := range ids {
			if _, err := raw.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	erased, err := raw.CountDocuments(ctx, bson.D{{Key: "status", Value: bson.D{{Key: "$ne", Value: "suspended"}}}})
	if err != nil || erased != 0 {
		t.Errorf("%d users lost the writer's status (err %v); stats %+v", erased, err, users.Stats())
	}
	// The writer never sets the version: every user was read at version 0.
	if s := users.Stats(); s.Upgraded != n || s.Written+s.Lost != n || s.Failed != 0 {
		t.Errorf("stats %+v: want %d upgrades, each written back or lost", s, n)
	}
}
