package integrity_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

const advisorRules = `collections:
  students:
    references:
      - {path: advisor._id, to: teachers}
    copies:
      - {via: advisor._id, mode: mirror, fields: {name: name}}
`

// embeddedSwap: a student's embedded advisor (not an array) is behind
// its teacher's name; between repair's read and its write, the
// application gives the student another advisor, whose name it copies
// right. The write's guard must miss (the advisor it read is gone), not
// write the first teacher's name into the second advisor.
func embeddedSwap(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	m, err := migration.Parse("0001_rules.yaml", []byte(advisorRules))
	if err != nil {
		t.Fatal(err)
	}
	insert(t, db, "teachers",
		bson.D{{Key: "_id", Value: "t1"}, {Key: "name", Value: "Ann"}},
		bson.D{{Key: "_id", Value: "t2"}, {Key: "name", Value: "Bob"}})
	advisor := func(id, name string) bson.D { return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}} }
	insert(t, db, "students", bson.D{{Key: "_id", Value: 1}, {Key: "advisor", Value: advisor("t1", "Bob")}}) // behind: Ann
	c, err := integrity.New(db, []*migration.Migration{m}, integrity.Options{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	swapped := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		if point != "integrity.write students" || attempt > 0 || swapped {
			return
		}
		swapped = true
		if _, err := db.Collection("students").UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "advisor", Value: advisor("t2", "Bob")}}}}); err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(c, nil)
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Advisor struct {
			ID   string `bson:"_id"`
			Name string
		}
	}
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !swapped || st.Advisor.Name != "Bob" {
		t.Errorf("student 1's advisor is %+v (swapped %v): want t2's name Bob, the application's write kept; report %+v", st.Advisor, swapped, rep.Fixes)
	}
}

func TestRepairEmbeddedCopyReferenceSwapped(t *testing.T) {
	embeddedSwap(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairEmbeddedCopyReferenceSwappedMongoDB(t *testing.T) {
	embeddedSwap(t, sandboxtest.MongoDB(t, "integrity_swap", "TestRepairEmbeddedCopyReferenceSwapped covers the sandbox"))
}

// sourceChangedBack: student 2's math credits are behind (3, math has
// 4); between repair's fetch of math and its write, the application sets
// math's credits back to 3 and propagates it, which writes nothing
// (student 2 holds 3 already). Repair's guard on the student still
// matches: without a look at the source after its write, it leaves the
// student at 4, a copy of a value the class no longer has. With a batch
// of one student, the sources are read again with the next batch's $in;
// with one batch for all, on their own after the pass.
func sourceChangedBack(t *testing.T, db *mongo.Database, batch int) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	app, err := integrity.New(db, rules(t), integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		if point != "integrity.write students" || attempt > 0 || changed {
			return
		}
		changed = true
		if _, err := db.Collection("classes").UpdateOne(ctx, bson.D{{Key: "_id", Value: "math"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "credits", Value: int32(3)}}}}); err != nil {
			t.Error(err)
		}
		if _, err := app.Propagate(ctx, "classes", "math"); err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(c, nil)
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Classes []struct {
			ID      string `bson:"_id"`
			Credits int32
		}
	}
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if !changed || len(st.Classes) != 2 || st.Classes[1].Credits != 3 {
		t.Errorf("student 2's classes %+v (changed %v): want math's credits 3, as the class has them now; fixes %+v", st.Classes, changed, rep.Fixes)
	}
}

func TestRepairCopySourceChangedBack(t *testing.T) {
	sourceChangedBack(t, sandboxtest.Database(t, "integrity"), 10)
	sourceChangedBack(t, sandboxtest.Database(t, "integrity_b1"), 1)
}

func TestRepairCopySourceChangedBackMongoDB(t *testing.T) {
	why := "TestRepairCopySourceChangedBack covers the sandbox"
	sourceChangedBack(t, sandboxtest.MongoDB(t, "integrity_source_back", why), 10)
	sourceChangedBack(t, sandboxtest.MongoDB(t, "integrity_source_back1", why), 1)
}

// reordered: student 2's math credits (its second class) are behind;
// between repair's read and its write an old release replaces the
// student whole with its classes in the other order. The write misses,
// the student is re-checked and math (first now) is fixed: one write, so
// one fix reported, not the stale classes.1.credits as well.
func reordered(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 10, Collections: []string{"students"}})
	if err != nil {
		t.Fatal(err)
	}
	swapped := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		if point != "integrity.write students" || attempt > 0 || swapped {
			return
		}
		swapped = true
		class := func(id, name string, credits int32) bson.D {
			return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
		}
		if _, err := db.Collection("students").ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}},
			bson.D{{Key: "classes", Value: bson.A{class("math", "Math", 3), class("art", "Art", 2)}}}); err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(c, nil)
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var fixed []integrity.Fix
	for _, f := range rep.Fixes {
		if f.ID == "2" && f.Outcome == integrity.OutcomeFixed {
			fixed = append(fixed, f)
		}
	}
	if !swapped || len(fixed) != 1 || fixed[0].Path != "classes.0.credits" || rep.Fixed != 1 {
		t.Errorf("fixed %d, student 2's fixes %+v (swapped %v): want the one write, classes.0.credits", rep.Fixed, fixed, swapped)
	}
}

func TestRepairReorderedArrayReportedOnce(t *testing.T) {
	reordered(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairReorderedArrayReportedOnceMongoDB(t *testing.T) {
	reordered(t, sandboxtest.MongoDB(t, "integrity_reordered", "TestRepairReorderedArrayReportedOnce covers the sandbox"))
}

const deleteRules = `collections:
  comments:
    references:
      - {path: postId, to: posts, onDangling: delete}
      - {path: authorId, to: users}
    copies:
      - {via: authorId, mode: mirror, fields: {authorName: name}}
`

// deletedByRepair: a comment whose post is gone (its rule deletes it)
// also has a stale copy of its author's name. Repair deletes the
// comment: it reports that, and no fix of a copy the comment no longer
// holds.
func deletedByRepair(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	m, err := migration.Parse("0001_rules.yaml", []byte(deleteRules))
	if err != nil {
		t.Fatal(err)
	}
	insert(t, db, "users", bson.D{{Key: "_id", Value: "u1"}, {Key: "name", Value: "Ann"}})
	insert(t, db, "posts", bson.D{{Key: "_id", Value: "p1"}})
	insert(t, db, "comments",
		bson.D{{Key: "_id", Value: 1}, {Key: "postId", Value: "gone"}, {Key: "authorId", Value: "u1"}, {Key: "authorName", Value: "Old"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "postId", Value: "p1"}, {Key: "authorId", Value: "u1"}, {Key: "authorName", Value: "Old"}})
	c, err := integrity.New(db, []*migration.Migration{m}, integrity.Options{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil || n != 0 {
		t.Fatalf("comment 1: %d left (%v), want it deleted", n, err)
	}
	if rep.Fixed != 2 || len(rep.Fixes) != 2 {
		t.Errorf("fixed %d, fixes %+v: want comment 1 deleted and comment 2's authorName, nothing else", rep.Fixed, rep.Fixes)
	}
}

func TestRepairDeletedDocumentReportsNoOtherFix(t *testing.T) {
	deletedByRepair(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairDeletedDocumentReportsNoOtherFixMongoDB(t *testing.T) {
	deletedByRepair(t, sandboxtest.MongoDB(t, "integrity_deleted", "TestRepairDeletedDocumentReportsNoOtherFix covers the sandbox"))
}
