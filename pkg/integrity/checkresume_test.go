package integrity_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// checkResumes: a resumable check killed at its fifth finding (student 5's
// credits: its context cancelled) stored its progress; the next one walks
// on from student 4, reads the students' credits of 5..10 alone, and
// reports exactly what an uninterrupted check reports; it then forgets the
// progress.
func checkResumes(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	defer integrity.SetSaveEvery(integrity.SetSaveEvery(0)) // progress at every document
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4)) // students 1..9 behind
	plain, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Resumable: true, Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	killed, cancel := context.WithCancel(ctx)
	seen := 0
	testhook.Set(c, func(point string, _ int64, _ int) {
		if point == "integrity.check students" {
			if seen++; seen == 5 {
				cancel()
			}
		}
	})
	if _, err := c.Check(killed); !errors.Is(err, context.Canceled) {
		t.Fatalf("the killed check returned %v, want context.Canceled", err)
	}
	seen = 0
	got, err := c.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testhook.Set(c, nil)
	if seen != 5 {
		t.Errorf("the resumed check found %d students out of line: want 5 (5..9), the rest counted before the kill", seen)
	}
	if a, b := asJSON(t, got), asJSON(t, want); a != b {
		t.Errorf("resumed check:\n%s\nwant, as an uninterrupted one:\n%s", a, b)
	}
	if n, err := db.Collection("mongomig_backfill").CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^\$check\$`}}}}); err != nil || n != 0 {
		t.Errorf("%d check progress documents kept after a finished check (%v)", n, err)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckResumes(t *testing.T) { checkResumes(t, sandboxtest.Database(t, "integrity")) }

func TestCheckResumesMongoDB(t *testing.T) {
	checkResumes(t, sandboxtest.MongoDB(t, "integrity_check_resume", "TestCheckResumes covers the sandbox"))
}
