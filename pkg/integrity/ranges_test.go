package integrity_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/lease"
)

// owned acquires leases as one process (an owner of its own).
type owned struct {
	db    *mongo.Database
	owner string
}

func (l owned) Acquire(ctx context.Context, name string, wait time.Duration) (lease.Locker, error) {
	return lease.Acquire(ctx, l.db.Collection("mongomig_lock"), name, lease.Options{Wait: wait, Owner: l.owner})
}

// behindStudents inserts students 1..n taking math at 3 credits, the
// class at 4: every one out of line.
func behindStudents(t *testing.T, db *mongo.Database, ids []any) {
	t.Helper()
	insert(t, db, "classes", bson.D{{Key: "_id", Value: "math"}, {Key: "name", Value: "Math"}, {Key: "credits", Value: int32(4)}})
	var docs []bson.D
	for _, id := range ids {
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "classes", Value: bson.A{
			bson.D{{Key: "_id", Value: "math"}, {Key: "name", Value: "Math"}, {Key: "credits", Value: int32(3)}}}}})
	}
	insert(t, db, "students", docs...)
}

// splitScenario: two repairs of one database at once, each with two
// workers, share the ranges of the students' rule: together they fix
// every student, each some, none the same one; the last to finish
// removes the plans and checkpoints.
func splitScenario(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	var ids []any
	for i := 1; i <= 120; i++ {
		ids = append(ids, i)
	}
	behindStudents(t, db, ids)
	reps := make([]*integrity.RepairReport, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 5, Workers: 2, Rate: 150, LeaseWait: 20 * time.Second,
			Leases: owned{db, fmt.Sprint("process-", p)}, Collections: []string{"students"}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); reps[p], errs[p] = c.Repair(ctx, false) }()
	}
	wg.Wait()
	by := map[string]int{}
	for p, rep := range reps {
		if errs[p] != nil {
			t.Fatalf("repair %d: %v", p, errs[p])
		}
		n := 0
		for _, f := range rep.Fixes {
			if f.Outcome != integrity.OutcomeFixed {
				continue
			}
			if q, twice := by[string(f.ID)]; twice {
				t.Errorf("student %s fixed by both repairs (%d and %d)", f.ID, q, p)
			}
			by[string(f.ID)] = p
			n++
		}
		if n == 0 {
			t.Errorf("repair %d fixed nothing: the work was not shared (%d fixed by the other)", p, len(by))
		}
	}
	if len(by) != len(ids) {
		t.Errorf("%d students fixed, want all %d", len(by), len(ids))
	}
	if n, err := db.Collection("mongomig_backfill").CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^\$repair\$`}}}}); err != nil || n != 0 {
		t.Errorf("%d plans and checkpoints left after both repairs finished (%v)", n, err)
	}
}

func TestRepairRangesSplit(t *testing.T) { splitScenario(t, sandboxtest.Database(t, "integrity")) }

func TestRepairRangesSplitMongoDB(t *testing.T) {
	splitScenario(t, sandboxtest.MongoDB(t, "integrity_ranges", "TestRepairRangesSplit covers the sandbox"))
}

// TestRepairResumesAcrossIDTypes: a repair stopped after a number _id goes
// on with the string and ObjectID _ids, which sort after every number
// ($gt on a number alone matches no string: MongoDB compares within a
// type class).
func TestRepairResumesAcrossIDTypes(t *testing.T) {
	idTypesScenario(t, sandboxtest.Database(t, "integrity"))
}

func TestRepairResumesAcrossIDTypesMongoDB(t *testing.T) {
	idTypesScenario(t, sandboxtest.MongoDB(t, "integrity_idtypes", "TestRepairResumesAcrossIDTypes covers the sandbox"))
}

func idTypesScenario(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	oid := bson.NewObjectID()
	behindStudents(t, db, []any{1, 2, "a", "b", oid})
	defer integrity.SetSaveEvery(integrity.SetSaveEvery(0)) // progress after every document
	for _, leases := range []lease.Acquirer{nil, owned{db, "test"}} {
		c, err := integrity.New(db, rules(t), integrity.Options{Leases: leases, Collections: []string{"students"}, BatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		killed, cancel := context.WithCancel(ctx)
		flushes := 0
		testhook.Set(c, func(point string, _ int64, _ int) {
			if point == "integrity.flush students" {
				if flushes++; flushes == 3 {
					cancel() // two students fixed
				}
			}
		})
		first, err := c.Repair(killed, false)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("leases %v: the stopped repair returned %v", leases != nil, err)
		}
		testhook.Set(c, nil)
		rep, err := c.Repair(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		// Together they fixed each student once.
		var got []string
		for _, f := range append(first.Fixes, rep.Fixes...) {
			got = append(got, string(f.ID))
		}
		slices.Sort(got)
		want := []string{`"a"`, `"b"`, "1", "2", `{"$oid":"` + oid.Hex() + `"}`}
		slices.Sort(want)
		if !slices.Equal(got, want) || len(first.Fixes) != 2 {
			t.Errorf("leases %v: the stopped and the resumed repair fixed %q, want %q, two by the first", leases != nil, got, want)
		}
		// Out of line again for the second round.
		if _, err := db.Collection("students").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "classes.0.credits", Value: int32(3)}}}}); err != nil {
			t.Fatal(err)
		}
	}
}
