package integrity_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// campus: students 1..9 take math (3 credits) and art, student 10 art
// only; two orders snapshot a pen at 2.0; post b's commentCount drifted
// (3 stored, 1 comment); comment 103's post was deleted.
func campus(t *testing.T, db *mongo.Database) {
	class := func(id, name string, credits int32) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
	}
	insert(t, db, "classes", class("math", "Math", 3), class("art", "Art", 2))
	for i := 1; i <= 9; i++ {
		insert(t, db, "students", bson.D{{Key: "_id", Value: i}, {Key: "classes", Value: bson.A{class("math", "Math", 3), class("art", "Art", 2)}}})
	}
	insert(t, db, "students", bson.D{{Key: "_id", Value: 10}, {Key: "classes", Value: bson.A{class("art", "Art", 2)}}})
	insert(t, db, "products", bson.D{{Key: "_id", Value: "p1"}, {Key: "name", Value: "Pen"}, {Key: "price", Value: 2.0}})
	for i := 20; i <= 21; i++ {
		insert(t, db, "orders", bson.D{{Key: "_id", Value: i}, {Key: "number", Value: int32(i)},
			{Key: "product", Value: bson.D{{Key: "_id", Value: "p1"}, {Key: "name", Value: "Pen"}, {Key: "price", Value: 2.0}}}})
	}
	insert(t, db, "counters", bson.D{{Key: "_id", Value: "orders"}, {Key: "seq", Value: int32(21)}})
	insert(t, db, "posts", bson.D{{Key: "_id", Value: "b"}, {Key: "commentCount", Value: int32(3)}, {Key: "best", Value: int32(9)}})
	insert(t, db, "comments",
		bson.D{{Key: "_id", Value: 102}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(9)}},
		bson.D{{Key: "_id", Value: 103}, {Key: "postId", Value: "deleted"}, {Key: "score", Value: int32(1)}})
}

func set(t *testing.T, db *mongo.Database, coll string, id any, field string, v any) {
	t.Helper()
	if _, err := db.Collection(coll).UpdateOne(context.Background(), bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: field, Value: v}}}}); err != nil {
		t.Fatal(err)
	}
}

// propagateScenario is issue 28's Done-when: class credits changed and
// the propagation killed midway (its context cancelled before its second
// batch) -> check lists exactly the students left behind, 3 -> 4 ->
// repair fixes exactly them while another writer edits other fields of
// students and $inc's a post's count -> check is clean; the orders keep
// the price they were bought at throughout.
func propagateScenario(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	campus(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	set(t, db, "classes", "math", "credits", int32(4))
	set(t, db, "products", "p1", "price", 3.0)
	if ps, err := c.Propagate(ctx, "products", "p1"); err != nil || len(ps) != 0 {
		t.Fatalf("propagating a snapshot's source: %v %v, want nothing written", ps, err)
	}
	killed, cancel := context.WithCancel(ctx)
	testhook.Set(c, func(point string, _ int64, batch int) {
		if point == "integrity.propagate students" && batch == 1 {
			cancel()
		}
	})
	if _, err := c.Propagate(killed, "classes", "math"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed propagation returned %v, want context.Canceled", err)
	}
	rep, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`comments 103 postId dangling "deleted"  `, `posts "b" commentCount differs 3 1 `}
	for i := 4; i <= 9; i++ { // the first batch, 1..3, was written
		want = append(want, fmt.Sprintf("students %d classes.0.credits differs 3 4 ", i))
	}
	if got := lines(rep); got != strings.Join(want, "\n") {
		t.Errorf("check after the killed propagation:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	var ool *integrity.OutOfLineError
	if !errors.As(rep.Err(), &ool) || ool.Count != 8 {
		t.Errorf("check's error %v, want 8 out of line (exit 3)", rep.Err())
	}

	// Repair, with writers between its check and its writes.
	edited := map[int]bool{}
	incremented := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		switch {
		case attempt > 0:
		case point == "integrity.write students" && len(edited) < 2:
			for _, id := range []int{2, 5} { // one in line, one left behind
				if !edited[id] {
					edited[id] = true
					set(t, db, "students", id, "nick", fmt.Sprint("n", id))
				}
			}
		case point == "integrity.write posts" && !incremented:
			incremented = true
			insert(t, db, "comments", bson.D{{Key: "_id", Value: 104}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(2)}})
			if _, err := db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "commentCount", Value: 1}}}}); err != nil {
				t.Error(err)
			}
		}
	})
	defer testhook.Set(c, nil)
	fixed, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fixed.Fixes {
		if f.Collection == "students" {
			got = append(got, fmt.Sprintf("%s %s %s->%s %s", f.ID, f.Path, f.Wrong, f.Right, f.Outcome))
		}
	}
	var wantFix []string
	for i := 4; i <= 9; i++ {
		wantFix = append(wantFix, fmt.Sprintf("%d classes.0.credits 3->4 fixed", i))
	}
	if strings.Join(got, "\n") != strings.Join(wantFix, "\n") {
		t.Errorf("repair's student fixes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantFix, "\n"))
	}
	after, err := c.Check(ctx)
	if err != nil || after.Err() != nil {
		t.Errorf("check after repair: %v %v\n%s", err, after.Err(), lines(after))
	}
	for _, id := range []int{2, 5} {
		var st struct{ Nick string }
		if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&st); err != nil || st.Nick != fmt.Sprint("n", id) {
			t.Errorf("student %d's concurrent edit was lost: %+v %v", id, st, err)
		}
	}
	var post struct{ CommentCount int64 }
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: "b"}}).Decode(&post); err != nil || post.CommentCount != 2 {
		t.Errorf("post b commentCount %d (%v), want 2: the concurrent $inc kept", post.CommentCount, err)
	}
	for i := 20; i <= 21; i++ {
		var o struct{ Product struct{ Price float64 } }
		if err := db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Decode(&o); err != nil || o.Product.Price != 2.0 {
			t.Errorf("order %d's snapshot price %v (%v), want 2.0 as bought", i, o.Product.Price, err)
		}
	}
}

// TestPropagateResumes: a propagation killed midway is resumed by calling
// it again, which writes exactly the copies left behind (students 4..9),
// then nothing on a third call.
func TestPropagateResumes(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "integrity")
	campus(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	set(t, db, "classes", "math", "credits", int32(4))
	killed, cancel := context.WithCancel(ctx)
	testhook.Set(c, func(point string, _ int64, batch int) {
		if point == "integrity.propagate students" && batch == 1 {
			cancel()
		}
	})
	if _, err := c.Propagate(killed, "classes", "math"); !errors.Is(err, context.Canceled) {
		t.Fatalf("killed: %v", err)
	}
	testhook.Set(c, nil)
	for i, want := range []int64{6, 0} {
		ps, err := c.Propagate(ctx, "classes", "math")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, p := range ps {
			t.Logf("%s: %d modified (%s)", p.Rule, p.Modified, p.Method)
			n += p.Modified
		}
		if n != want {
			t.Errorf("call %d modified %d, want %d", i+2, n, want)
		}
	}
}

func TestPropagateKilledThenRepaired(t *testing.T) {
	propagateScenario(t, sandboxtest.Database(t, "integrity"))
}

func TestPropagateKilledThenRepairedMongoDB(t *testing.T) {
	propagateScenario(t, sandboxtest.MongoDB(t, "integrity_propagate", "TestPropagateKilledThenRepaired covers the sandbox"))
}
