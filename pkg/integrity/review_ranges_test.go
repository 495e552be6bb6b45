package integrity_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
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
