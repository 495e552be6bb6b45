package versioned_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// A write-back guards a field that held an array on that array exactly: a
// writer who, between the read and the write-back, wrapped it in a new
// array (tags: [1, 2] became [[1, 2], 3], which the plain equality {tags:
// [1, 2]} still matches: src/mongo/db/matcher/path.cpp, BSONElementIterator
// yields a leaf array's elements, then the array) makes the write-back
// match nothing; the next read writes it back and keeps the writer's
// tags. The writer is placed at the write-back's update command. The func
// step (splitName) makes the write-back guard every field as read.
// On the sandbox (FerretDB v1) no writer can nest an array: there only
// the unchanged array is checked, which must be written back.
func TestWriteBackArrayGuardMongoDB(t *testing.T) {
	for _, policy := range []versioned.Policy{versioned.Sync, versioned.Deferred} {
		t.Run(policy.String(), func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				tags   bson.A
				writer bson.A // nil: no writer
			}{
				{"unchanged", bson.A{1, 2}, nil},
				{"unchanged documents", bson.A{bson.D{{Key: "a", Value: 1}}}, nil},
				{"nested", bson.A{1, 2}, bson.A{bson.A{1, 2}, 3}},
				{"empty nested", bson.A{}, bson.A{bson.A{}}},
			} {
				t.Run(tc.name, func(t *testing.T) { testWriteBackArray(t, policy, tc.tags, tc.writer) })
			}
		})
	}
}

func testWriteBackArray(t *testing.T, policy versioned.Policy, tags, writer bson.A) {
	ctx := context.Background()
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		uri = sandboxtest.Start(t).URI()
	} else {
		_ = sandboxtest.MongoDB(t, "mongomig_test_versioned_arrays", "")
	}
	plain := sandboxtest.Connect(t, uri).Database("mongomig_test_versioned_arrays").Collection("users")
	if err := plain.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	id := bson.NewObjectID()
	if _, err := plain.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Alan Turing"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "alan@example.com"}}}, {Key: "status", Value: "active"}, {Key: "tags", Value: tags}, {Key: "version", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	var interleaved atomic.Bool
	var writerErr error
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "update" || writer == nil || interleaved.Swap(true) {
			return
		}
		_, writerErr = plain.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tags", Value: writer}}}})
	}}
	raw := sandboxtest.Connect(t, uri, options.Client().SetMonitor(mon)).Database("mongomig_test_versioned_arrays").Collection("users")
	opts := []versioned.Option{versioned.WithWriteBack(policy)}
	if policy == versioned.Deferred {
		opts = append(opts, versioned.WithDeferred(versioned.DeferredOptions{Interval: -1}))
	}
	users := versioned.New(raw, registry(t), opts...)
	read := func() {
		var u User
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u); err != nil {
			t.Fatal(err)
		}
		if policy == versioned.Deferred {
			if err := users.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	read()
	if writerErr != nil && strings.Contains(writerErr.Error(), "nested arrays are not supported") {
		t.Skip("FerretDB v1 stores no nested arrays: no writer can make this change")
	}
	if writerErr != nil {
		t.Fatal(writerErr)
	}
	st := users.Stats()
	if writer == nil {
		if st.Written != 1 || st.Lost != 0 || st.Failed != 0 {
			t.Fatalf("an unchanged document's write-back: stats %+v, want one written", st)
		}
		return
	}
	if st.Written != 0 || st.Lost != 1 {
		t.Fatalf("the write-back after the writer nested the array: stats %+v, want one lost", st)
	}
	// The next read writes it back, from what the writer left.
	users = versioned.New(raw, registry(t), opts...)
	read()
	if st := users.Stats(); st.Written != 1 {
		t.Fatalf("the retried write-back: stats %+v, want one written", st)
	}
	got := storedD(t, plain, id)
	want, _ := bson.MarshalExtJSON(bson.D{{Key: "tags", Value: writer}}, true, false)
	have, _ := bson.MarshalExtJSON(bson.D{{Key: "tags", Value: lookup(got, "tags")}}, true, false)
	if string(want) != string(have) || lookup(got, "version") != int32(3) {
		t.Errorf("stored %v: want the writer's tags at version 3", got)
	}
}
