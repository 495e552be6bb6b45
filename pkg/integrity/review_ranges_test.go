package integrity_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// staleWorker: repair A's range lease is gone (it expired while A was
// paused: here its document is removed) right before A sends a bulk of
// fixes; repair B takes the range over and fixes every student. A's
// bulk then goes out: its guards miss, no write is lost, but A must not
// report as fixed the students B fixed.
func staleWorker(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	var ids []any
	for i := 1; i <= 10; i++ {
		ids = append(ids, i)
	}
	behindStudents(t, db, ids)
	opts := func(owner string) integrity.Options {
		return integrity.Options{BatchSize: 5, LeaseWait: 5 * time.Second, Leases: owned{db, owner}, Collections: []string{"students"}}
	}
	a, err := integrity.New(db, rules(t), opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := integrity.New(db, rules(t), opts("b"))
	if err != nil {
		t.Fatal(err)
	}
	var repB *integrity.RepairReport
	testhook.Set(a, func(point string, _ int64, n int) {
		if point != "integrity.flush students" || n > 0 || repB != nil {
			return
		}
		if _, err := db.Collection("mongomig_lock").DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "range"}}}}); err != nil {
			t.Error(err)
		}
		if repB, err = b.Repair(ctx, false); err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(a, nil)
	repA, err := a.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if repB == nil {
		t.Fatal("repair B never ran")
	}
	byB := map[string]bool{}
	for _, f := range repB.Fixes {
		if f.Outcome == integrity.OutcomeFixed {
			byB[string(f.ID)] = true
		}
	}
	for _, f := range repA.Fixes {
		if f.Outcome == integrity.OutcomeFixed && byB[string(f.ID)] {
			t.Errorf("student %s reported fixed by both repairs (A fixed %d, B %d)", f.ID, repA.Fixed, repB.Fixed)
		}
	}
}

func TestRepairStaleWorkerReportsNoFixOfAnother(t *testing.T) {
	staleWorker(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairStaleWorkerReportsNoFixOfAnotherMongoDB(t *testing.T) {
	staleWorker(t, sandboxtest.MongoDB(t, "integrity_stale", "TestRepairStaleWorkerReportsNoFixOfAnother covers the sandbox"))
}

// forgetCut: a repair that finished every range removes the plans and
// checkpoints with one delete; killed in the middle of it (the server
// removes them in _id order: a pass's plan before its ranges), it leaves
// a range checkpoint marked done with no plan. The next repair, planning
// the pass again, must not take that range for done: it repairs the
// students put behind since.
func forgetCut(t *testing.T, db *mongo.Database) {
	defer integrity.SetSaveEvery(integrity.SetSaveEvery(0))
	ctx := context.Background()
	var ids []any
	for i := 1; i <= 10; i++ {
		ids = append(ids, i)
	}
	behindStudents(t, db, ids)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 5, LeaseWait: 5 * time.Second, Leases: owned{db, "a"}, Collections: []string{"students"}})
	if err != nil {
		t.Fatal(err)
	}
	var ranges []bson.Raw
	testhook.Set(c, func(point string, _ int64, n int) {
		if point != "integrity.flush students" || ranges != nil {
			return
		}
		cur, err := db.Collection("mongomig_backfill").Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `\$range\$`}}}})
		if err == nil {
			err = cur.All(ctx, &ranges)
		}
		if err != nil {
			t.Error(err)
		}
		if len(ranges) == 0 {
			ranges = nil // not saved yet: the next flush
		}
	})
	if rep, err := c.Repair(ctx, false); err != nil || rep.Fixed != 10 || len(ranges) == 0 {
		t.Fatalf("first repair: %v, fixed %v, %d range checkpoints seen", err, rep, len(ranges))
	}
	testhook.Set(c, nil)
	// What the killed removal leaves: the range checkpoint, done, and no
	// plan.
	for _, r := range ranges {
		doc := bson.D{}
		if err := bson.Unmarshal(r, &doc); err != nil {
			t.Fatal(err)
		}
		for i := range doc {
			if doc[i].Key == "done" {
				doc[i].Value = true
			}
		}
		if _, err := db.Collection("mongomig_backfill").InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection("students").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "classes.0.credits", Value: int32(3)}}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fixed != 10 {
		t.Errorf("second repair fixed %d: want the 10 students behind again (a range left done by a cut removal is not the new plan's)", rep.Fixed)
	}
}

func TestRepairForgetCutLeavesNoRangeDone(t *testing.T) {
	forgetCut(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairForgetCutLeavesNoRangeDoneMongoDB(t *testing.T) {
	forgetCut(t, sandboxtest.MongoDB(t, "integrity_forget_cut", "TestRepairForgetCutLeavesNoRangeDone covers the sandbox"))
}

// checkForgetCut: a resumable check that finished removes its progress
// with one delete; killed in the middle of it, it leaves some rules'
// progress, done, behind. The next resumable check is a new check: it
// must report what the collections hold, not the rows of the old one.
func checkForgetCut(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	plain, err := integrity.New(db, rules(t), integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := integrity.New(db, rules(t), integrity.Options{Resumable: true, Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// What the cut removal left: one rule's progress, done, from a check
	// of other data.
	const rule = "posts.commentCount = count(comments by postId)"
	stale := state.CheckProgress{ID: state.CheckKey(rule), Rule: rule, Done: true, OutOfLine: 99, Checked: 7, Method: integrity.MethodServer}
	if err := state.New(db).SaveCheckProgress(ctx, &stale); err != nil {
		t.Fatal(err)
	}
	got, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := asJSON(t, got), asJSON(t, want); a != b {
		t.Errorf("check after a cut removal:\n%s\nwant, as a new check:\n%s", a, b)
	}
}

func TestCheckForgetCutStartsOver(t *testing.T) {
	checkForgetCut(t, sandboxtest.Database(t, "integrity"))
}

func TestCheckForgetCutStartsOverMongoDB(t *testing.T) {
	checkForgetCut(t, sandboxtest.MongoDB(t, "integrity_check_cut", "TestCheckForgetCutStartsOver covers the sandbox"))
}
