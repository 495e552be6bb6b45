package lease

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestTransactAfterTakeoverWritesNothingMongoDB: a holder paused between
// its fence and its write (transact, the part of Transact after the fence)
// resumes after its lease was removed and taken by another acquisition:
// its transaction writes nothing and the loss is final. Only a server with
// transactions can show it; the sandbox has none.
func TestTransactAfterTakeoverWritesNothingMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: on servers without transactions the time fence is the guarantee (leasetest)")
	}
	ctx := context.Background()
	db := sandboxtest.Connect(t, uri).Database("mongomig_lease_txn")
	_ = db.Drop(ctx)
	t.Cleanup(func() { _ = db.Drop(ctx) })
	ok, err := Transactions(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("the server has no multi-document transactions (Transactions: hello names no replica set or mongos with sessions); the time fence is the guarantee there (leasetest)")
	}
	locks, ledger := db.Collection("locks"), db.Collection("ledger")
	if err := db.CreateCollection(ctx, "ledger"); err != nil {
		t.Fatal(err)
	}
	opts := Options{Lease: 2 * time.Second, Owner: "same"}
	a, err := Acquire(ctx, locks, "mongomig", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Release(ctx) }()
	if err := a.Fence(ctx); err != nil {
		t.Fatal(err)
	}
	// Paused here, a is removed by an operator and another process takes
	// the lease.
	if _, err := Remove(ctx, locks, "mongomig", true); err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(ctx, locks, "mongomig", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Release(ctx) }()
	err = a.transact(ctx, func(ctx context.Context) error {
		_, err := ledger.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
		return err
	})
	if !errors.Is(err, ErrLost) || !errors.Is(a.Err(), ErrLost) {
		t.Fatalf("transact after a takeover: %v", err)
	}
	if n, _ := ledger.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("the paused holder recorded %d ledger entries after losing its lease", n)
	}
	if err := b.Transact(ctx, func(ctx context.Context) error {
		_, err := ledger.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
		return err
	}); err != nil {
		t.Errorf("the new holder's transaction: %v", err)
	}
}
