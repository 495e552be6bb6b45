package reshape_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// Both servers run every extract test: the sandbox (FerretDB v1) and, with
// MONGOMIG_TEST_URI, the second server or a real MongoDB.
func servers(t *testing.T, name string, fn func(t *testing.T, db *mongo.Database)) {
	t.Run("sandbox", func(t *testing.T) { fn(t, sandboxtest.Database(t, name)) })
	t.Run("MongoDB", func(t *testing.T) {
		fn(t, sandboxtest.MongoDB(t, name, "the sandbox subtest covers the same on FerretDB v1"))
	})
}

// TestExtractBlogMongoDB: posts.comments -> comments with postId and a
// commentCount on the post; every comment exactly once.
func TestExtractBlogMongoDB(t *testing.T) {
	servers(t, "reshape_blog", func(t *testing.T, db *mongo.Database) {
		want := loadBlog(t, db, 47)
		res, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Batch: 7})
		if err != nil {
			t.Fatal(err)
		}
		checkExactlyOnce(t, db, want)
		total := int64(0)
		for _, w := range want {
			total += int64(len(w))
		}
		if len(res) != 1 || res[0].Documents != total {
			t.Fatalf("results %+v, want one moving %d comments", res, total)
		}
		left, _ := db.Collection("posts").CountDocuments(context.Background(), bson.D{{Key: "comments", Value: bson.D{{Key: "$exists", Value: true}}}})
		if left != 0 {
			t.Errorf("%d posts still have comments", left)
		}
		// Run again: done, nothing repeated.
		res, err = run(t, db, blogMigration(t, blogFile), reshape.Options{})
		if err != nil || !res[0].Skipped {
			t.Fatalf("second run: %+v, %v; want it skipped", res, err)
		}
		checkExactlyOnce(t, db, want)
	})
}

// TestExtractOldReleaseAppendsMongoDB: an old release appends to a post's
// embedded comments between the move's children write and its guarded
// parent update (by $push, and by replacing the whole post as read
// before), at several posts; the appended comments are moved too, each
// exactly once, and the counts hold.
func TestExtractOldReleaseAppendsMongoDB(t *testing.T) {
	for _, how := range []string{"push", "replace"} {
		t.Run(how, func(t *testing.T) {
			servers(t, "reshape_append_"+how, func(t *testing.T, db *mongo.Database) {
				ctx := context.Background()
				want := loadBlog(t, db, 20)
				posts := db.Collection("posts")
				calls := 0
				hook := func(point string, _ int64, _ int) {
					if point != "reshape.children" {
						return
					}
					calls++
					if calls%3 != 1 {
						return
					}
					// The post the move is at: the one whose children it just wrote.
					var last bson.M
					if err := db.Collection("comments").FindOne(ctx, bson.D{}, options().SetSort(bson.D{{Key: "_id.parent", Value: -1}})).Decode(&last); err != nil {
						return
					}
					id := last["postId"].(int32)
					cm := bson.D{{Key: "by", Value: "old"}, {Key: "text", Value: fmt.Sprintf("late %d", calls)}}
					want[id] = append(want[id], key(cm))
					if how == "push" {
						if _, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$push", Value: bson.D{{Key: "comments", Value: cm}}}}); err != nil {
							t.Error(err)
						}
						return
					}
					var p bson.D
					if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&p); err != nil {
						t.Error(err)
						return
					}
					for i, e := range p {
						if e.Key == "comments" {
							p[i].Value = append(e.Value.(bson.A), cm)
						}
					}
					if _, err := posts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, p); err != nil {
						t.Error(err)
					}
				}
				if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Batch: 4, Hook: hook}); err != nil {
					t.Fatal(err)
				}
				if calls < 3 {
					t.Fatalf("the hook ran %d times", calls)
				}
				checkExactlyOnce(t, db, want)
			})
		})
	}
}

var errKilled = errors.New("killed")

// TestExtractKilledAndResumedMongoDB: the move stops dead (no deferred
// write runs) at every point it names, at several counts, and a new run
// resumes: every comment exactly once.
func TestExtractKilledAndResumedMongoDB(t *testing.T) {
	points := []string{"reshape.read", "reshape.children", "reshape.parent", "reshape.batch"}
	servers(t, "reshape_kill", func(t *testing.T, db *mongo.Database) {
		for _, point := range points {
			for _, at := range []int{1, 3, 8} {
				ctx := context.Background()
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				want := loadBlog(t, db, 15)
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
					if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Batch: 3, Hook: kill}); err != nil {
						t.Fatal(err)
					}
					return false
				}()
				if !killed && at == 1 {
					t.Fatalf("%s never reached", point)
				}
				if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Batch: 3}); err != nil {
					t.Fatalf("resume after %s #%d: %v", point, at, err)
				}
				t.Run(fmt.Sprintf("%s#%d", point, at), func(t *testing.T) { checkExactlyOnce(t, db, want) })
			}
		}
	})
}

// TestExtractKeepFirstMongoDB: keep: {first: 2} keeps the first two
// comments embedded (also moved) and moves them all.
func TestExtractKeepFirstMongoDB(t *testing.T) {
	servers(t, "reshape_first", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		want := loadBlog(t, db, 12)
		file := "run:\n  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: {first: 2}}\n"
		if _, err := run(t, db, blogMigration(t, file), reshape.Options{Batch: 5}); err != nil {
			t.Fatal(err)
		}
		for p, w := range want {
			n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "postId", Value: p}})
			if n != int64(len(w)) {
				t.Errorf("post %d: %d children, want %d", p, n, len(w))
			}
			var post bson.Raw
			if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Decode(&post); err != nil {
				t.Fatal(err)
			}
			ids, _ := reshape.ChildIDs(post, "comments", 2)
			if len(ids) != min(2, len(w)) {
				t.Errorf("post %d keeps %d comments, want %d", p, len(ids), min(2, len(w)))
			}
			for _, id := range ids { // the dual read: each kept one is a child too
				if n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); n != 1 {
					t.Errorf("post %d: kept comment %v is not among the children", p, id)
				}
			}
		}
	})
}
