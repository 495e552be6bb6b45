package integrity_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// propagateInterleave runs Propagate (credits 3 -> 4) with writers acting
// before its second batch (the point integrity.propagate): one sets a
// nick on student 5 (another field); an old release replaces student 2,
// already written, whole with the old credits; the application sets the
// class's credits again, to 5. The nick is kept, the second change wins
// (Propagate re-reads the source and goes again), and the replaced
// student is written again by that second pass.
func propagateInterleave(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4))
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	done := false
	testhook.Set(c, func(point string, _ int64, batch int) {
		if point != "integrity.propagate students" || batch != 1 || done {
			return
		}
		done = true
		set(t, db, "students", 5, "nick", "Bo")
		class := func(id, name string, credits int32) bson.D {
			return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
		}
		if _, err := db.Collection("students").ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}},
			bson.D{{Key: "classes", Value: bson.A{class("math", "Math", 3), class("art", "Art", 2)}}}); err != nil {
			t.Error(err)
		}
		set(t, db, "classes", "math", "credits", int32(5))
	})
	defer testhook.Set(c, nil)
	if _, err := c.Propagate(ctx, "classes", "math"); err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatal("the writers never ran")
	}
	n, err := db.Collection("students").CountDocuments(ctx, bson.D{{Key: "classes.credits", Value: int32(5)}})
	if err != nil || n != 9 {
		t.Errorf("%d students hold math's 5 credits (%v), want all 9", n, err)
	}
	var st struct{ Nick string }
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 5}}).Decode(&st); err != nil || st.Nick != "Bo" {
		t.Errorf("student 5's concurrent nick was lost: %+v %v", st, err)
	}
	rep, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Collection == "students" {
			t.Errorf("left out of line: %+v", f)
		}
	}
}

func TestPropagateInterleavings(t *testing.T) {
	propagateInterleave(t, sandboxtest.Database(t, "integrity"))
}

func TestPropagateInterleavingsMongoDB(t *testing.T) {
	propagateInterleave(t, sandboxtest.MongoDB(t, "integrity_propagate_interleave", "TestPropagateInterleavings covers the sandbox"))
}
