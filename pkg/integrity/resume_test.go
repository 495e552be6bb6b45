package integrity_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/lease"
)

// leases acquires the protocol's leases in db's mongomig_lock.
type leases struct{ db *mongo.Database }

func (l leases) Acquire(ctx context.Context, name string, wait time.Duration) (lease.Locker, error) {
	return lease.Acquire(ctx, l.db.Collection("mongomig_lock"), name, lease.Options{Wait: wait, Owner: "test"})
}

func studentFixes(rep *integrity.RepairReport) string {
	var out []string
	for _, f := range rep.Fixes {
		if f.Collection == "students" {
			out = append(out, fmt.Sprintf("%s %s %s->%s %s", f.ID, f.Path, f.Wrong, f.Right, f.Outcome))
		}
	}
	return strings.Join(out, "\n")
}

func behind(from, to int) string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%d classes.0.credits 3->4 fixed", i))
	}
	return strings.Join(out, "\n")
}

// resumeScenario: a repair killed before its second bulk of student
// fixes (its context cancelled at the point integrity.flush; batches of
// two) stored its progress; the next repair goes on from there and fixes
// exactly the students left (3..9; 2..9 on the sandbox, bulks of one), skips nothing else, and forgets the
// progress when done.
func resumeScenario(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4)) // no propagation: all nine behind
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	killed, cancel := context.WithCancel(ctx)
	writes := 0
	testhook.Set(c, func(point string, _ int64, _ int) {
		if point == "integrity.flush students" {
			if writes++; writes == 2 {
				cancel()
			}
		}
	})
	first, err := c.Repair(killed, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed repair returned %v, want context.Canceled", err)
	}
	testhook.Set(c, nil)
	// Bulks of two (one on the sandbox, which has no guarded writes): the
	// first bulk was written.
	cut := 2
	if strings.Count(studentFixes(first), "\n") == 0 {
		cut = 1
	}
	if got := studentFixes(first); got != behind(1, cut) {
		t.Errorf("the killed repair fixed:\n%s\nwant:\n%s", got, behind(1, cut))
	}
	var progress []integrity.RuleProgress
	c2, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Leases: leases{db}, Rate: 1000,
		Progress: func(p integrity.RuleProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c2.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := studentFixes(second); got != behind(cut+1, 9) || !second.Resumed {
		t.Errorf("the resumed repair (resumed %v) fixed:\n%s\nwant:\n%s", second.Resumed, got, behind(cut+1, 9))
	}
	// The students' rules are one pass (pass.go), stopped midway: none of
	// them was done before the kill (TestRepairSkipsDonePass and the
	// integrity_scenario script cover a skipped pass).
	if len(progress) != len(c2.Rules()) || progress[0].Skipped {
		t.Errorf("progress %+v: want one line per rule, the first (students' reference, in the pass the kill stopped) not skipped", progress)
	}
	after, err := c2.Check(ctx)
	if err != nil || after.Err() != nil {
		t.Errorf("check after the resumed repair: %v %v\n%s", err, after.Err(), lines(after))
	}
	p, err := state.New(db).RepairProgressOf(ctx, c2.Rules()[1])
	if err != nil || p.LastID != nil || p.Done {
		t.Errorf("progress kept after a finished repair: %+v %v", p, err)
	}
}

func TestRepairResumes(t *testing.T) { resumeScenario(t, sandboxtest.Database(t, "integrity")) }

func TestRepairResumesMongoDB(t *testing.T) {
	resumeScenario(t, sandboxtest.MongoDB(t, "integrity_resume", "TestRepairResumes covers the sandbox"))
}

// TestRepairLease: a repair while another holds the database's repair
// lease fails with the lease's timeout and writes nothing.
func TestRepairLease(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "integrity")
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4))
	held, err := leases{db}.Acquire(ctx, integrity.RepairLease(db.Name()), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	c, err := integrity.New(db, rules(t), integrity.Options{Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Repair(ctx, false)
	if !errors.Is(err, lease.ErrTimeout) || rep != nil {
		t.Errorf("repair beside a held lease: %v, %+v; want a lease timeout and no report", err, rep)
	}
	var st struct{ Classes []struct{ Credits int32 } }
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&st); err != nil || st.Classes[0].Credits != 3 {
		t.Errorf("student 1 written beside the held lease: %+v %v", st, err)
	}
}
