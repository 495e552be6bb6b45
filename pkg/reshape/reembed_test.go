package reshape_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

func revert(t testing.TB, db *mongo.Database, m *migration.Migration, opts reshape.Options) ([]reshape.OpResult, error) {
	var res []reshape.OpResult
	err := underLock(t, db, func(ctx context.Context) error {
		var err error
		res, err = reshape.Revert(ctx, db, m, opts)
		return err
	})
	return res, err
}

// checkReembedded: the comments collection is empty and no run progress
// of migration 2 is left (a later up runs the extract again).
func checkReembedded(t *testing.T, db *mongo.Database) {
	t.Helper()
	ctx := context.Background()
	if n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("%d comments left in the comments collection after down", n)
	}
	n, _ := db.Collection("mongomig_backfill").CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: `^\$run\$2\$`}}}})
	if n != 0 {
		t.Errorf("%d run progress documents of migration 2 left after down", n)
	}
}

// TestDownReembedsMongoDB: down of the blog's extract moves every comment
// back into its post exactly once (commentCount back to 0), forgets the
// progress, and up extracts them again.
func TestDownReembedsMongoDB(t *testing.T) {
	servers(t, "reshape_reembed", func(t *testing.T, db *mongo.Database) {
		want := loadBlog(t, db, 30)
		m := blogMigration(t, blogFile)
		if _, err := run(t, db, m, reshape.Options{Batch: 7}); err != nil {
			t.Fatal(err)
		}
		res, err := revert(t, db, m, reshape.Options{Batch: 5})
		if err != nil {
			t.Fatal(err)
		}
		total := int64(0)
		for _, w := range want {
			total += int64(len(w))
		}
		if len(res) != 1 || res[0].Documents != total {
			t.Fatalf("revert %+v, want one moving %d comments back", res, total)
		}
		checkExactlyOnce(t, db, want)
		checkReembedded(t, db)
		res, err = run(t, db, m, reshape.Options{Batch: 7})
		if err != nil || res[0].Skipped || res[0].Documents != total {
			t.Fatalf("up after down: %+v, %v; want the extract run again", res, err)
		}
		checkExactlyOnce(t, db, want)
	})
}

// TestDownReembedKeepFirstMongoDB: with keep: {first: 2} the kept
// comments are both embedded and children; down embeds each once.
func TestDownReembedKeepFirstMongoDB(t *testing.T) {
	servers(t, "reshape_reembed_first", func(t *testing.T, db *mongo.Database) {
		want := loadBlog(t, db, 12)
		m := blogMigration(t, "run:\n  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: {first: 2}}\n")
		if _, err := run(t, db, m, reshape.Options{Batch: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := revert(t, db, m, reshape.Options{Batch: 4}); err != nil {
			t.Fatal(err)
		}
		checkExactlyOnce(t, db, want)
		checkReembedded(t, db)
	})
}

// TestDownReembedKilledMongoDB: down stops dead at every point the
// re-embed names, at several counts, and a new down resumes: every
// comment embedded exactly once, none left as a child.
func TestDownReembedKilledMongoDB(t *testing.T) {
	points := []string{"reshape.down.read", "reshape.down.parent", "reshape.down.delete", "reshape.down.batch"}
	servers(t, "reshape_reembed_kill", func(t *testing.T, db *mongo.Database) {
		m := blogMigration(t, blogFile)
		for _, point := range points {
			for _, at := range []int{1, 4} {
				ctx := context.Background()
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				want := loadBlog(t, db, 15)
				if _, err := run(t, db, m, reshape.Options{Batch: 4}); err != nil {
					t.Fatal(err)
				}
				n := 0
				kill := func(p string, _ int64, _ int) {
					if p == point {
						if n++; n == at {
							panic(errKilled)
						}
					}
				}
				killed := func() (died bool) {
					defer func() {
						if r := recover(); r != nil {
							if r != errKilled {
								panic(r)
							}
							died = true
						}
					}()
					if _, err := revert(t, db, m, reshape.Options{Batch: 3, Hook: kill}); err != nil {
						t.Fatal(err)
					}
					return false
				}()
				if !killed && at == 1 {
					t.Fatalf("%s never reached", point)
				}
				if _, err := revert(t, db, m, reshape.Options{Batch: 3}); err != nil {
					t.Fatalf("resume after %s #%d: %v", point, at, err)
				}
				t.Run(fmt.Sprintf("%s#%d", point, at), func(t *testing.T) {
					checkExactlyOnce(t, db, want)
					checkReembedded(t, db)
				})
			}
		}
	})
}

// TestRevertCollectionsMongoDB: down renames back, drops the copy (its
// source untouched), and says plainly that a dropped collection cannot
// come back.
func TestRevertCollectionsMongoDB(t *testing.T) {
	servers(t, "reshape_revert_colls", func(t *testing.T, db *mongo.Database) {
		seed(t, db, "a", 3)
		seed(t, db, "src", 4)
		seed(t, db, "scratch", 2)
		m := migrationN(t, 2, "run:\n  - renameCollection: {from: a, to: b}\n  - copyCollection: {from: src, to: dst}\n  - dropCollection: {name: scratch, allowNonEmpty: true}\n")
		if _, err := run(t, db, m, reshape.Options{}); err != nil {
			t.Fatal(err)
		}
		res, err := revert(t, db, m, reshape.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if countOf(t, db, "a") != 3 || countOf(t, db, "b") != 0 || countOf(t, db, "src") != 4 || countOf(t, db, "dst") != 0 {
			t.Errorf("after down: a %d b %d src %d dst %d, want 3 0 4 0", countOf(t, db, "a"), countOf(t, db, "b"), countOf(t, db, "src"), countOf(t, db, "dst"))
		}
		if len(res) != 3 || res[0].Kind != migration.RunDrop {
			t.Fatalf("results %+v, want three, last operation first", res)
		}
		if want := "0002_run.yaml:4: 0002 dropped scratch with 2 documents (allowNonEmpty) (run operation 3); down cannot restore it"; res[0].Unrestorable != want {
			t.Errorf("drop's revert says %q, want %q", res[0].Unrestorable, want)
		}
		if res[1].Summary != "dropped dst, the copy of src (4 documents); src is untouched" || res[2].Summary != "renamed b back to a" {
			t.Errorf("summaries %q, %q", res[1].Summary, res[2].Summary)
		}
		// A second down finds nothing to do: the progress is forgotten,
		// and up runs them all again.
		if _, err := run(t, db, m, reshape.Options{}); err != nil {
			t.Fatalf("up after down: %v", err)
		}
		if countOf(t, db, "b") != 3 || countOf(t, db, "dst") != 4 {
			t.Errorf("up after down did not rename and copy again")
		}
	})
}
