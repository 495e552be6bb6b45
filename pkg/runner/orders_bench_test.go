package runner_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

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
