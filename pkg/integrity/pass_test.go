package integrity_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// onePass: a repair of the students' three rules (a reference and two
// mirror copies through it) reads the students once: one find, no
// aggregate, and one $in of classes per batch of students, shared by the
// three rules (and one more after the last batch's writes, sources.go); on a
// server with guarded writes, the fixes of a batch are one bulk (one
// update command per batch that has fixes).
func onePass(t *testing.T, db *mongo.Database, rec *cmdlog.Recorder, bulks bool) {
	ctx := context.Background()
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4)) // students 1..9 behind
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Collections: []string{"students"}, Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	rep, err := c.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fixed != 9 || rep.Left != 0 {
		t.Fatalf("fixed %d, left %d: want the 9 students' credits fixed", rep.Fixed, rep.Left)
	}
	on := func(name, coll string) int {
		n := 0
		for _, cmd := range rec.Named(name) {
			if v, ok := cmd.Lookup(name).StringValueOK(); ok && v == coll {
				n++
			}
		}
		return n
	}
	const batches = 5 // 10 students, 2 at a time
	if got := on("find", "students"); got != 1 {
		t.Errorf("%d finds of students: want 1 (one read for the three rules)", got)
	}
	if got := on("aggregate", "students"); got != 0 {
		t.Errorf("%d aggregates of students: want none", got)
	}
	// Each batch wrote copies: after its writes, their sources are read
	// again with the next batch's $in, so a class changed meanwhile is
	// re-checked; the last batch's, on their own (sources.go).
	if got := on("find", "classes"); got != batches+1 {
		t.Errorf("%d finds of classes: want %d, one $in per batch for the three rules and the sources the last one wrote", got, batches+1)
	}
	if got := on("update", "students"); bulks && got != batches {
		// Batches 1..4 hold two students behind each, the last one (9).
		t.Errorf("%d update commands on students: want %d, one bulk per batch", got, batches)
	}

	// The posts' two aggregates of the comments by postId: one read of
	// the posts, one $group of the comments per batch (where the server
	// has $group; else each folded from a find).
	set(t, db, "posts", "b", "commentCount", int32(7))
	c, err = integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Collections: []string{"posts"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	if rep, err := c.Repair(ctx, false); err != nil || rep.Fixed != 1 {
		t.Fatalf("repair of the posts: %v, fixed %d; want post b's commentCount", err, rep.Fixed)
	}
	if got := on("find", "posts"); got != 1 {
		t.Errorf("%d finds of posts: want 1", got)
	}
	if got := on("aggregate", "comments"); got > 1 || got == 0 && on("find", "comments") != 2 {
		t.Errorf("%d aggregates of comments (%d finds): want one $group for both aggregates", got, on("find", "comments"))
	}
}

func TestRepairOnePass(t *testing.T) {
	rec := &cmdlog.Recorder{}
	s := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, s.URI(), options.Client().SetMonitor(rec.Monitor())).Database("integrity")
	onePass(t, db, rec, false) // no guarded writes: a fix at a time
}

func TestRepairOnePassMongoDB(t *testing.T) {
	uriDB := sandboxtest.MongoDB(t, "integrity_one_pass", "TestRepairOnePass covers the sandbox")
	rec := &cmdlog.Recorder{}
	db := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database(uriDB.Name())
	onePass(t, db, rec, true)
}

// skipsDonePass: a repair killed in the posts' pass (its first bulk of
// posts) had finished the students', orders' and comments' passes; the
// next one reports their rules skipped and fixes the posts alone.
func skipsDonePass(t *testing.T, db *mongo.Database, opts integrity.Options) {
	ctx := context.Background()
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4))
	c, err := integrity.New(db, rules(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	killed, cancel := context.WithCancel(ctx)
	testhook.Set(c, func(point string, _ int64, _ int) {
		if point == "integrity.flush posts" {
			cancel()
		}
	})
	if _, err := c.Repair(killed, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed repair returned %v, want context.Canceled", err)
	}
	testhook.Set(c, nil)
	var progress []integrity.RuleProgress
	opts.Progress = func(p integrity.RuleProgress) { progress = append(progress, p) }
	c2, err := integrity.New(db, rules(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c2.Repair(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != len(c2.Rules()) {
		t.Fatalf("progress %+v: want one line per rule", progress)
	}
	for _, p := range progress {
		posts := p.Rule == c2.Rules()[len(c2.Rules())-2] || p.Rule == c2.Rules()[len(c2.Rules())-1]
		if p.Skipped == posts {
			t.Errorf("rule %s skipped %v: want the posts' rules alone walked", p.Rule, p.Skipped)
		}
	}
	if rep.Fixed != 1 || len(rep.Fixes) != 1 || rep.Fixes[0].Path != "commentCount" || !rep.Resumed {
		t.Errorf("resumed repair (resumed %v) fixed %d: %+v; want post b's commentCount alone", rep.Resumed, rep.Fixed, rep.Fixes)
	}
	var post struct{ CommentCount int64 }
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: "b"}}).Decode(&post); err != nil || post.CommentCount != 1 {
		t.Errorf("post b commentCount %d (%v), want 1", post.CommentCount, err)
	}
}

func TestRepairSkipsDonePass(t *testing.T) {
	t.Run("progress", func(t *testing.T) {
		skipsDonePass(t, sandboxtest.Database(t, "integrity"), integrity.Options{BatchSize: 2})
	})
	t.Run("ranges", func(t *testing.T) {
		db := sandboxtest.Database(t, "integrity")
		skipsDonePass(t, db, integrity.Options{BatchSize: 2, Leases: leases{db}})
	})
}
