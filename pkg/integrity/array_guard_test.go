package integrity_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// TestRepairArrayGuardIsExactMongoDB: a copy inside an array is fixed
// with a write guarded on the whole array as read. A writer who nests
// that array (classes: [[art, math], art]) between the check and the
// write must make the guard miss: a query's equality on an array also
// matches an array holding it (src/mongo/db/matcher/path.cpp,
// BSONElementIterator), and the fix's $set classes.1.credits would then
// write math's credits into the writer's art. (The sandbox, FerretDB v1,
// stores no nested array: the writer cannot run there.)
func TestRepairArrayGuardIsExactMongoDB(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(t, "integrity_arrays", "the sandbox stores no nested arrays")
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	class := func(id, name string, credits int32) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
	}
	nested := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		if point != "integrity.write students" || nested {
			return
		}
		nested = true
		old := bson.A{class("art", "Art", 2), class("math", "Math", 3)}
		if _, err := db.Collection("students").UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "classes", Value: bson.A{old, class("art", "Art", 2)}}}}}); err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(c, nil)
	if _, err := c.Repair(ctx, false); err != nil {
		t.Fatal(err)
	}
	if !nested {
		t.Fatal("the writer never ran: no guarded write of students was made")
	}
	var st struct {
		Classes []bson.RawValue
	}
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Classes) != 2 || st.Classes[0].Type != bson.TypeArray {
		t.Fatalf("student 2's classes = %v: want the writer's nested array kept", st.Classes)
	}
	credits, err := st.Classes[1].Document().LookupErr("credits")
	if err != nil || credits.Int32() != 2 {
		t.Errorf("student 2's art (the writer's) has credits %v, want 2: the fix meant for math was written into it", credits)
	}
}
