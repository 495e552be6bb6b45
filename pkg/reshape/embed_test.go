package reshape_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// The sample shop: orders reference a product by productId and keep its
// name and price as bought (a snapshot); students hold their classes as
// documents {_id} and keep each class's name (a mirror).
const shopFile = `description: The extended reference pattern on the shop.
run:
  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name, price: price}}
  - embed: {into: students, via: classes._id, from: classes, mode: mirror, fields: {name: name}}
`

const shopOrders, shopStudents = 40, 25

// loadShop inserts products, classes, orders and students; order 7 and a
// class of student 5 name no document (dangling), order 9's productId is
// null, order 11 has none.
func loadShop(t testing.TB, db *mongo.Database) {
	t.Helper()
	ctx := context.Background()
	var products, classes, orders, students []any
	for p := int32(1); p <= 6; p++ {
		products = append(products, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: fmt.Sprintf("product %d", p)}, {Key: "price", Value: float64(p) * 2.5}, {Key: "stock", Value: 100}})
	}
	for c := 1; c <= 5; c++ {
		classes = append(classes, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", c)}, {Key: "name", Value: fmt.Sprintf("class %d", c)}, {Key: "credits", Value: c}})
	}
	for o := int32(1); o <= shopOrders; o++ {
		d := bson.D{{Key: "_id", Value: o}}
		switch o {
		case 7:
			d = append(d, bson.E{Key: "productId", Value: int32(999)})
		case 9:
			d = append(d, bson.E{Key: "productId", Value: nil})
		case 11:
		default:
			d = append(d, bson.E{Key: "productId", Value: o%6 + 1})
		}
		orders = append(orders, append(d, bson.E{Key: "qty", Value: o}))
	}
	for s := int32(1); s <= shopStudents; s++ {
		cls := bson.A{bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", s%5+1)}, {Key: "grade", Value: "A"}}, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", (s+2)%5+1)}}}
		if s == 5 {
			cls = append(cls, bson.D{{Key: "_id", Value: "c99"}})
		}
		students = append(students, bson.D{{Key: "_id", Value: s}, {Key: "classes", Value: cls}})
	}
	for name, docs := range map[string][]any{"products": products, "classes": classes, "orders": orders, "students": students} {
		if _, err := db.Collection(name).InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
}

// checkShop: every order's and student's copy matches the document its
// final reference names (absent when it names none), and the qty and
// grade fields hold want (nil: as loaded).
func checkShop(t *testing.T, db *mongo.Database, wantQty map[int32]int32) {
	t.Helper()
	ctx := context.Background()
	src := func(coll string) map[any]bson.M {
		var docs []bson.M
		cur, err := db.Collection(coll).Find(ctx, bson.D{})
		if err == nil {
			err = cur.All(ctx, &docs)
		}
		if err != nil {
			t.Fatal(err)
		}
		out := map[any]bson.M{}
		for _, d := range docs {
			out[d["_id"]] = d
		}
		return out
	}
	products, classes := src("products"), src("classes")
	for _, o := range src("orders") {
		id := o["_id"].(int32)
		p, ok := products[o["productId"]]
		switch {
		case ok && (o["productName"] != p["name"] || o["price"] != p["price"]):
			t.Errorf("order %d (productId %v): productName %v, price %v; want %v, %v", id, o["productId"], o["productName"], o["price"], p["name"], p["price"])
		case !ok && (o["productName"] != nil || o["price"] != nil):
			t.Errorf("order %d (productId %v names no product) holds a copy %v", id, o["productId"], o)
		}
		want := id
		if q, ok := wantQty[id]; ok {
			want = q
		}
		if o["qty"] != want {
			t.Errorf("order %d: qty %v, want %d (a concurrent write was lost)", id, o["qty"], want)
		}
	}
	for _, s := range src("students") {
		for i, el := range s["classes"].(bson.A) {
			e := bson.M{}
			for _, f := range el.(bson.D) {
				e[f.Key] = f.Value
			}
			c, ok := classes[e["_id"]]
			if ok && e["name"] != c["name"] || !ok && e["name"] != nil {
				t.Errorf("student %v class %d (%v): name %v, want %v", s["_id"], i, e["_id"], e["name"], c["name"])
			}
		}
	}
}

// TestEmbedShopMongoDB: both embeds fill every copy, count and name the
// dangling references, and a second run repeats nothing.
func TestEmbedShopMongoDB(t *testing.T) {
	servers(t, "reshape_embed", func(t *testing.T, db *mongo.Database) {
		loadShop(t, db)
		res, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 7})
		if err != nil {
			t.Fatal(err)
		}
		checkShop(t, db, nil)
		if len(res) != 2 || res[0].Documents != shopOrders-3 || res[1].Documents != shopStudents {
			t.Fatalf("results %+v, want %d orders and %d students", res, shopOrders-3, shopStudents)
		}
		if res[0].Dangling != 1 || len(res[0].DanglingIDs) != 1 || res[0].DanglingIDs[0] != "7" || res[1].Dangling != 1 || res[1].DanglingIDs[0] != "5" {
			t.Errorf("dangling: %+v / %+v, want order 7 and student 5", res[0], res[1])
		}
		t.Log(res[0].Summary)
		res, err = run(t, db, migrationN(t, 3, shopFile), reshape.Options{})
		if err != nil || !res[0].Skipped || !res[1].Skipped {
			t.Fatalf("second run: %+v, %v; want both skipped", res, err)
		}
	})
}

// TestEmbedKilledAndResumedMongoDB: the embed stops dead at every point
// it names, at several counts, and a new run resumes: every copy matches.
func TestEmbedKilledAndResumedMongoDB(t *testing.T) {
	servers(t, "reshape_embed_kill", func(t *testing.T, db *mongo.Database) {
		for _, point := range []string{"reshape.read", "reshape.embed", "reshape.batch"} {
			for _, at := range []int{1, 3, 8} {
				ctx := context.Background()
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				loadShop(t, db)
				n := 0
				kill := func(p string, _ int64, _ int) {
					if p == point {
						if n++; n == at {
							panic(errKilled)
						}
					}
				}
				died := func() (died bool) {
					defer func() {
						if r := recover(); r != nil {
							if r != errKilled {
								panic(r)
							}
							died = true
						}
					}()
					if _, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 3, Hook: kill}); err != nil {
						t.Fatal(err)
					}
					return false
				}()
				if !died && at == 1 {
					t.Fatalf("%s never reached", point)
				}
				res, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 3})
				if err != nil {
					t.Fatalf("resume after %s #%d: %v", point, at, err)
				}
				t.Run(fmt.Sprintf("%s#%d", point, at), func(t *testing.T) {
					checkShop(t, db, nil)
					if last := res[len(res)-1]; last.Dangling != 1 {
						t.Errorf("resumed result %+v: want the dangling student counted", last)
					}
				})
			}
		}
	})
}

// TestEmbedHeldRefusedMongoDB: an order holding productName already is
// refused by the dry run and by up, naming it, before anything is written.
func TestEmbedHeldRefusedMongoDB(t *testing.T) {
	servers(t, "reshape_embed_held", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		loadShop(t, db)
		if _, err := db.Collection("orders").UpdateOne(ctx, bson.D{{Key: "_id", Value: 12}}, bson.D{{Key: "$set", Value: bson.D{{Key: "productName", Value: "typed by hand"}}}}); err != nil {
			t.Fatal(err)
		}
		m := migrationN(t, 3, shopFile)
		plan, err := reshape.Plan(ctx, db, m)
		if err != nil {
			t.Fatal(err)
		}
		if plan[0].Refused == "" || plan[1].Refused != "" || plan[0].Documents != shopOrders-1 {
			t.Fatalf("plan %+v: want the orders' embed refused, %d orders counted", plan, shopOrders-1)
		}
		_, err = run(t, db, m, reshape.Options{})
		var held *reshape.HeldError
		if !errors.As(err, &held) || held.Documents != 1 || held.FirstID != "12" {
			t.Fatalf("run: %v, want a HeldError naming order 12", err)
		}
		if n, _ := db.Collection("orders").CountDocuments(ctx, bson.D{{Key: "price", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
			t.Errorf("%d orders got a price from a refused embed", n)
		}
	})
}

// TestEmbedDownMongoDB: down removes the copied fields and nothing else
// (a snapshot says plainly its values cannot come back; a mirror does
// not), forgets the progress, and a later up embeds again.
func TestEmbedDownMongoDB(t *testing.T) {
	servers(t, "reshape_embed_down", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		loadShop(t, db)
		m := migrationN(t, 3, shopFile)
		if _, err := run(t, db, m, reshape.Options{Batch: 6}); err != nil {
			t.Fatal(err)
		}
		res, err := revert(t, db, m, reshape.Options{Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		// Revert runs last first: students, then orders.
		if len(res) != 2 || res[1].Unrestorable == "" || res[0].Unrestorable != "" || res[1].Documents != shopOrders-3 {
			t.Fatalf("revert %+v: want the orders' snapshot unrestorable, %d orders", res, shopOrders-3)
		}
		t.Log(res[1].Unrestorable)
		for coll, f := range map[string]string{"orders": "productName", "students": "classes.name"} {
			if n, _ := db.Collection(coll).CountDocuments(ctx, bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
				t.Errorf("%d %s keep %s after down", n, coll, f)
			}
		}
		if n, _ := db.Collection("students").CountDocuments(ctx, bson.D{{Key: "classes.grade", Value: "A"}}); n != shopStudents {
			t.Errorf("%d students keep their grade, want %d", n, shopStudents)
		}
		if n, _ := db.Collection("orders").CountDocuments(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$exists", Value: true}}}, {Key: "productId", Value: bson.D{{Key: "$exists", Value: true}}}}); n != shopOrders-1 {
			t.Errorf("%d orders keep qty and productId after down, want %d", n, shopOrders-1)
		}
		res, err = run(t, db, m, reshape.Options{})
		if err != nil || res[0].Skipped {
			t.Fatalf("up after down: %+v, %v; want it to embed again", res, err)
		}
		checkShop(t, db, nil)
	})
}

// TestPlanEmbedCounts: the dry run says what the embed copies into how
// many documents, from where.
func TestPlanEmbedCounts(t *testing.T) {
	db := sandboxtest.Database(t, "reshape_embed_plan")
	loadShop(t, db)
	plan, err := reshape.Plan(context.Background(), db, migrationN(t, 3, shopFile))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"embeds productName, price into 39 orders documents from products by productId (snapshot)",
		"embeds classes.name into 25 students documents from classes by classes._id (mirror)",
	}
	for i, w := range want {
		if plan[i].Summary != w || plan[i].Refused != "" {
			t.Errorf("plan %d: %+v, want %q", i, plan[i], w)
		}
	}
}
