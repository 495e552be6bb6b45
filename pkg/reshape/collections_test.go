package reshape_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/reshape"
)

func seed(t *testing.T, db *mongo.Database, coll string, n int) {
	t.Helper()
	var docs []any
	for i := 0; i < n; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: i}})
	}
	if _, err := db.Collection(coll).InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

func countOf(t *testing.T, db *mongo.Database, coll string) int64 {
	t.Helper()
	n, err := db.Collection(coll).CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRenameCollectionMongoDB: renamed once; the second run is skipped,
// and a run that finds the target taken refuses.
func TestRenameCollectionMongoDB(t *testing.T) {
	servers(t, "reshape_rename", func(t *testing.T, db *mongo.Database) {
		seed(t, db, "old", 5)
		m := blogMigration(t, "run:\n  - renameCollection: {from: old, to: fresh}\n")
		if _, err := run(t, db, m, reshape.Options{}); err != nil {
			t.Fatal(err)
		}
		if countOf(t, db, "fresh") != 5 || countOf(t, db, "old") != 0 {
			t.Fatalf("fresh %d, old %d", countOf(t, db, "fresh"), countOf(t, db, "old"))
		}
		if res, err := run(t, db, m, reshape.Options{}); err != nil || !res[0].Skipped {
			t.Fatalf("second run: %+v %v", res, err)
		}
		seed(t, db, "a", 1)
		seed(t, db, "b", 1)
		_, err := run(t, db, migrationN(t, 3, "run:\n  - renameCollection: {from: a, to: b}\n"), reshape.Options{})
		if err == nil || countOf(t, db, "a") != 1 {
			t.Fatalf("rename onto an existing collection: %v", err)
		}
	})
}

// TestDropCollectionRefusedMongoDB: a drop is refused while documents
// remain, allowed with allowNonEmpty, and the dry run counts them.
func TestDropCollectionRefusedMongoDB(t *testing.T) {
	servers(t, "reshape_drop", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		seed(t, db, "drafts", 3)
		m := blogMigration(t, "run:\n  - dropCollection: {name: drafts}\n")
		plan, err := reshape.Plan(ctx, db, m)
		if err != nil || plan[0].Documents != 3 || plan[0].Refused == "" {
			t.Fatalf("plan %+v, %v", plan, err)
		}
		_, err = run(t, db, m, reshape.Options{})
		var ne *reshape.NotEmptyError
		if !errors.As(err, &ne) || ne.Documents != 3 || countOf(t, db, "drafts") != 3 {
			t.Fatalf("drop of a non-empty collection: %v", err)
		}
		m = migrationN(t, 3, "run:\n  - dropCollection: {name: drafts, allowNonEmpty: true}\n")
		if _, err := run(t, db, m, reshape.Options{}); err != nil {
			t.Fatal(err)
		}
		names, _ := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "drafts"}})
		if len(names) != 0 {
			t.Fatal("drafts not dropped")
		}
	})
}

// TestCopyCollectionResumedMongoDB: a copy stopped after a batch resumes
// and copies every document exactly once.
func TestCopyCollectionResumedMongoDB(t *testing.T) {
	servers(t, "reshape_copy", func(t *testing.T, db *mongo.Database) {
		seed(t, db, "src", 23)
		m := blogMigration(t, "run:\n  - copyCollection: {from: src, to: dst}\n")
		func() {
			defer func() {
				if r := recover(); r != nil && r != errKilled {
					panic(r)
				}
			}()
			kill := func(p string, _ int64, i int) {
				if p == "reshape.batch" && i >= 10 {
					panic(errKilled)
				}
			}
			_, _ = run(t, db, m, reshape.Options{Batch: 5, Hook: kill})
		}()
		if n := countOf(t, db, "dst"); n != 10 {
			t.Fatalf("after the kill: %d copied, want 10", n)
		}
		res, err := run(t, db, m, reshape.Options{Batch: 5})
		if err != nil {
			t.Fatal(err)
		}
		if countOf(t, db, "dst") != 23 || res[0].Documents != 23 {
			t.Fatalf("dst %d, result %+v", countOf(t, db, "dst"), res)
		}
	})
}

// TestPlanExtractCounts: the dry run counts the parents holding comments
// and their comments, and changes nothing.
func TestPlanExtractCounts(t *testing.T) {
	servers(t, "reshape_plan", func(t *testing.T, db *mongo.Database) {
		want := loadBlog(t, db, 10)
		var elems, parents int64
		for _, w := range want {
			elems += int64(len(w))
			parents++
		}
		plan, err := reshape.Plan(context.Background(), db, blogMigration(t, blogFile))
		if err != nil {
			t.Fatal(err)
		}
		// keep: count visits every post with the field, empty ones too.
		if plan[0].Elements != elems || plan[0].Documents != 10 {
			t.Fatalf("plan %+v, want %d elements in 10 posts", plan[0], elems)
		}
		if countOf(t, db, "comments") != 0 {
			t.Fatal("the plan wrote")
		}
		_ = parents
	})
}
