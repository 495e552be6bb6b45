package integrity_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

const rulesFile = `collections:
  students:
    references:
      - {path: classes._id, to: classes}
    copies:
      - {via: classes._id, mode: mirror, fields: {credits: credits, name: name}}
  orders:
    references:
      - {path: product._id, to: products}
    copies:
      - {via: product._id, mode: snapshot, fields: {price: price, name: name}}
    counters:
      - {path: number, in: counters, id: orders, field: seq}
  comments:
    references:
      - {path: postId, to: posts, onDangling: unset}
  posts:
    aggregates:
      - {field: commentCount, op: count, from: comments, by: postId}
      - {field: best, op: max, from: comments, by: postId, of: score}
`

func rules(t *testing.T) []*migration.Migration {
	t.Helper()
	m, err := migration.Parse("0001_rules.yaml", []byte(rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	return []*migration.Migration{m}
}

func insert(t *testing.T, db *mongo.Database, coll string, docs ...bson.D) {
	t.Helper()
	if _, err := db.Collection(coll).InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// school fills the shop and the school, each rule with one document out
// of line.
func school(t *testing.T, db *mongo.Database) {
	insert(t, db, "classes",
		bson.D{{Key: "_id", Value: "math"}, {Key: "name", Value: "Math"}, {Key: "credits", Value: int32(4)}},
		bson.D{{Key: "_id", Value: "art"}, {Key: "name", Value: "Art"}, {Key: "credits", Value: int32(2)}})
	class := func(id, name string, credits int32) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
	}
	insert(t, db, "students",
		bson.D{{Key: "_id", Value: 1}, {Key: "classes", Value: bson.A{class("math", "Math", 4), class("art", "Art", 2)}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "classes", Value: bson.A{class("art", "Art", 2), class("math", "Math", 3)}}}, // left behind: 3 -> 4
		bson.D{{Key: "_id", Value: 3}, {Key: "classes", Value: bson.A{class("gym", "Gym", 1)}}})                           // dangling
	insert(t, db, "products", bson.D{{Key: "_id", Value: "p1"}, {Key: "name", Value: "Pen"}, {Key: "price", Value: 2.5}})
	insert(t, db, "orders",
		bson.D{{Key: "_id", Value: 10}, {Key: "number", Value: int32(7)}, {Key: "product", Value: bson.D{{Key: "_id", Value: "p1"}, {Key: "name", Value: "Pen"}, {Key: "price", Value: 2.0}}}},   // old price: in line
		bson.D{{Key: "_id", Value: 11}, {Key: "number", Value: int32(9)}, {Key: "product", Value: bson.D{{Key: "_id", Value: "p1"}, {Key: "name", Value: "Pen"}, {Key: "price", Value: "2.0"}}}}) // type changed
	insert(t, db, "counters", bson.D{{Key: "_id", Value: "orders"}, {Key: "seq", Value: int32(8)}}) // behind 9
	insert(t, db, "posts",
		bson.D{{Key: "_id", Value: "a"}, {Key: "commentCount", Value: int32(2)}, {Key: "best", Value: int32(5)}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "commentCount", Value: int64(3)}, {Key: "best", Value: int32(9)}}) // drifted: 1 comment
	insert(t, db, "comments",
		bson.D{{Key: "_id", Value: 100}, {Key: "postId", Value: "a"}, {Key: "score", Value: int32(5)}},
		bson.D{{Key: "_id", Value: 101}, {Key: "postId", Value: "a"}, {Key: "score", Value: int32(1)}},
		bson.D{{Key: "_id", Value: 102}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(9)}},
		bson.D{{Key: "_id", Value: 103}, {Key: "postId", Value: "deleted"}, {Key: "score", Value: int32(1)}})
}

func lines(rep *integrity.Report) string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, strings.Join([]string{f.Collection, string(f.ID), f.Path, f.Problem, string(f.Stored), string(f.Expected), f.ExpectedType}, " "))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

const wantFindings = `comments 103 postId dangling "deleted"  
counters "orders" seq behind 8 9 
orders 11 product.price type "2.0"  number
posts "b" commentCount differs 3 1 
students 2 classes.1.credits differs 3 4 
students 3 classes._id dangling "gym"  `

func checkScenario(t *testing.T, db *mongo.Database, opts integrity.Options) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rules {
		t.Logf("%s: %s, %d checked, %d out of line", r.Rule, r.Method, r.Checked, r.OutOfLine)
	}
	if got := lines(rep); got != wantFindings {
		t.Errorf("findings:\n%s\nwant:\n%s", got, wantFindings)
	}
	if rep.OutOfLine != 6 || rep.Err() == nil {
		t.Errorf("out of line %d, err %v", rep.OutOfLine, rep.Err())
	}

	fixed, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	for _, f := range fixed.Fixes {
		outcomes[f.Collection+" "+string(f.ID)+" "+f.Path] = f.Outcome + " " + string(f.Wrong) + " -> " + string(f.Right)
	}
	for k, want := range map[string]string{
		"students 2 classes.1.credits": "fixed 3 -> 4",
		"posts \"b\" commentCount":     "fixed 3 -> 1",
		"counters \"orders\" seq":      "fixed 8 -> 9",
		"orders 11 product.price":      integrity.OutcomeSnapshot + " \"2.0\" -> ",
		"students 3 classes._id":       integrity.OutcomeReported + " \"gym\" -> ",
		"comments 103 postId":          "fixed \"deleted\" -> (reference removed)",
	} {
		if outcomes[k] != want {
			t.Errorf("%s: %q, want %q", k, outcomes[k], want)
		}
	}
	after, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(after); got != "orders 11 product.price type \"2.0\"  number\nstudents 3 classes._id dangling \"gym\"  " {
		t.Errorf("after repair:\n%s", got)
	}
	var order struct {
		Product struct{ Price any }
	}
	if err := db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: 10}}).Decode(&order); err != nil || order.Product.Price != 2.0 {
		t.Errorf("the snapshot was rewritten: %v %v", order, err)
	}
}

// TestCheckAndRepair: the shop and the school on the sandbox: check finds
// exactly the values out of line; repair fixes the mirrors, aggregates,
// counters and references it may, and leaves the snapshot and the
// reported reference.
func TestCheckAndRepair(t *testing.T) {
	checkScenario(t, sandboxtest.Database(t, "integrity"), integrity.Options{BatchSize: 2})
}

// TestCheckAndRepairMongoDB: the same on the second server, server-side
// ($lookup, $group) and client-side.
func TestCheckAndRepairMongoDB(t *testing.T) {
	for _, clientOnly := range []bool{false, true} {
		db := sandboxtest.MongoDB(t, "integrity_test", "TestCheckAndRepair covers the sandbox")
		checkScenario(t, db, integrity.Options{BatchSize: 2, ClientOnly: clientOnly})
		_ = db.Drop(context.Background())
	}
}
