package reshape_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/reshape"
)

// inFlight is the referencing document the embed is about to write: the
// lowest _id with a reference and no copy yet (the walk is in _id order).
func inFlight(ctx context.Context, coll *mongo.Collection, filter bson.D) (int32, bool) {
	var d bson.M
	if err := coll.FindOne(ctx, filter, mopts.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}})).Decode(&d); err != nil {
		return 0, false
	}
	return d["_id"].(int32), true
}

// TestEmbedReferenceChangedMongoDB: between the embed's read and its
// guarded write, a writer changes the reference of the document in
// flight (and its qty; a student's class in flight is replaced by
// another and graded): the write matches nothing, the document is read
// again, and every copy ends matching its final reference, with the
// writer's other fields kept.
func TestEmbedReferenceChangedMongoDB(t *testing.T) {
	servers(t, "reshape_embed_ref", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		loadShop(t, db)
		orders, students := db.Collection("orders"), db.Collection("students")
		qty := map[int32]int32{}
		calls, changed := 0, 0
		hook := func(point string, _ int64, _ int) {
			if point != "reshape.embed" {
				return
			}
			if calls++; calls%2 != 1 {
				return
			}
			if id, ok := inFlight(ctx, orders, bson.D{{Key: "productId", Value: bson.D{{Key: "$type", Value: "int"}}}, {Key: "productName", Value: bson.D{{Key: "$exists", Value: false}}}}); ok && id != 7 {
				qty[id] = 1000 + id
				set := bson.D{{Key: "productId", Value: (id+3)%6 + 1}, {Key: "qty", Value: qty[id]}}
				if _, err := orders.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: set}}); err != nil {
					t.Error(err)
				}
				changed++
				return
			}
			if id, ok := inFlight(ctx, students, bson.D{{Key: "classes.name", Value: bson.D{{Key: "$exists", Value: false}}}}); ok {
				cls := bson.A{bson.D{{Key: "_id", Value: "c4"}, {Key: "grade", Value: "B"}}, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", id%5+1)}}}
				if _, err := students.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "classes", Value: cls}}}}); err != nil {
					t.Error(err)
				}
				changed++
			}
		}
		if _, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 5, Hook: hook}); err != nil {
			t.Fatal(err)
		}
		if changed < 10 {
			t.Fatalf("the writer changed %d references; want at least 10", changed)
		}
		checkShop(t, db, qty)
		n, _ := students.CountDocuments(ctx, bson.D{{Key: "classes.grade", Value: "B"}})
		if n == 0 {
			t.Error("no student kept the writer's graded class")
		}
	})
}

// oldOrder is an order as the old release knows it: no productName, no
// price. Replacing an order from it removes the copies.
type oldOrder struct {
	ID        int32 `bson:"_id"`
	ProductID any   `bson:"productId,omitempty"`
	Qty       int32 `bson:"qty"`
}

// TestEmbedOldReleaseReplacesMongoDB: during the run an old release
// replaces whole orders from its struct (read before, so without the
// copies; some with a new productId and qty), both orders already
// written and the one in flight: no qty written by it is lost, and every
// order ends with the copy of the product its final productId names.
func TestEmbedOldReleaseReplacesMongoDB(t *testing.T) {
	servers(t, "reshape_embed_old", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		loadShop(t, db)
		orders := db.Collection("orders")
		qty := map[int32]int32{}
		replace := func(id int32, newRef bool) {
			var o oldOrder
			if err := orders.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&o); err != nil {
				t.Error(err)
				return
			}
			o.Qty += 500
			qty[id] = o.Qty
			if newRef {
				o.ProductID = (id+1)%6 + 1
			}
			if _, err := orders.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, o); err != nil {
				t.Error(err)
			}
		}
		batches, embeds := 0, 0
		hook := func(point string, _ int64, _ int) {
			switch point {
			case "reshape.batch":
				// Orders written by earlier batches lose their copies.
				if batches++; batches <= 6 {
					replace(int32(batches), batches%2 == 0)
					replace(int32(batches+10), false)
				}
			case "reshape.embed":
				// The order in flight is replaced between read and write.
				if embeds++; embeds%5 == 0 {
					// (Order 7 names no product: never written, never in flight.)
					if id, ok := inFlight(ctx, orders, bson.D{{Key: "_id", Value: bson.D{{Key: "$ne", Value: 7}}}, {Key: "productId", Value: bson.D{{Key: "$type", Value: "int"}}}, {Key: "productName", Value: bson.D{{Key: "$exists", Value: false}}}}); ok {
						replace(id, embeds%10 == 0)
					}
				}
			}
		}
		res, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 4, Hook: hook})
		if err != nil {
			t.Fatal(err)
		}
		if batches < 6 {
			t.Fatalf("%d batches, want the old release to replace during at least 6", batches)
		}
		checkShop(t, db, qty)
		t.Log(res[0].Summary)
	})
}
