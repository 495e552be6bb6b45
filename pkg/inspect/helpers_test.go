package inspect_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/runner"
)

// The tests of a baseline check it the way a team uses it: it lints,
// validates the documents it came from, and `up` applies it. Those are
// pkg/runner's; the test helpers below are the runner tests' own, since
// test files cannot be shared between packages.

func newRunner(t testing.TB, db *mongo.Database, fsys fstest.MapFS, opts ...runner.Option) *runner.Runner {
	t.Helper()
	r, err := runner.New(db, fsys, append([]runner.Option{runner.WithLockWait(time.Minute), runner.WithLockLease(2 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ledgerVersions(t testing.TB, db *mongo.Database) []int64 {
	t.Helper()
	cur, err := db.Collection(runner.DefaultLedgerCollection).Find(context.Background(), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var entries []runner.LedgerEntry
	if err := cur.All(context.Background(), &entries); err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range entries {
		out = append(out, e.Version)
	}
	return out
}

// loadOrders inserts n current-version orders (valid except every 100th).
func loadOrders(b *testing.B, db *mongo.Database, n int) {
	ctx := context.Background()
	batch := make([]any, 0, 1000)
	for i := 0; i < n; i++ {
		qty := int32(1 + i%3)
		if i%100 == 0 {
			qty = 0
		}
		batch = append(batch, bson.D{
			{Key: "_id", Value: bson.NewObjectID()}, {Key: "userId", Value: bson.NewObjectID()},
			{Key: "items", Value: bson.A{bson.D{{Key: "sku", Value: "A"}, {Key: "name", Value: "Mug"}, {Key: "price", Value: 9.5}, {Key: "qty", Value: qty}}}},
			{Key: "status", Value: "paid"}, {Key: "createdAt", Value: bson.DateTime(1700000000000)},
			{Key: "currency", Value: "EUR"}, {Key: "totals", Value: bson.D{{Key: "gross", Value: 9.5}}},
			{Key: "notes", Value: fmt.Sprintf("order %d", i)}, {Key: "version", Value: int32(4)},
		})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := db.Collection("orders").InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}
