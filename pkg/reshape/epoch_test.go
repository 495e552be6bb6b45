package reshape_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/reshape"
)

// TestExtractEqualElementAppendedAfterMoveMongoDB: the data-loss bug of
// elements without an _id. A post holds two "+1" comments (no _id); the
// extract moves them (children {parent, hash, n: 0 and 1}) and removes the array; an
// old release then appends an equal "+1". Before the per-parent epoch the
// next pass derived the same child _id for it, found the child, and
// removed the comment without making one (while adding 1 to the count).
// Now every comment is moved exactly once, and the count is 3.
func TestExtractEqualElementAppendedAfterMoveMongoDB(t *testing.T) {
	for keep, first := range map[string]int{"{count: commentCount}": 0, "nothing": 0, "{first: 1}": 1} {
		t.Run(keep, func(t *testing.T) {
			servers(t, "reshape_epoch", func(t *testing.T, db *mongo.Database) {
				ctx := context.Background()
				posts := db.Collection("posts")
				plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
				if _, err := posts.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "comments", Value: bson.A{plusOne, plusOne}}}); err != nil {
					t.Fatal(err)
				}
				appended := 0
				hook := func(point string, _ int64, _ int) {
					if point != "reshape.parent" || appended > 0 {
						return
					}
					appended++ // an old release, after the move of post 1
					if _, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(1)}},
						bson.D{{Key: "$push", Value: bson.D{{Key: "comments", Value: plusOne}}}}); err != nil {
						t.Error(err)
					}
				}
				file := "run:\n  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: " + keep + "}\n"
				if _, err := run(t, db, blogMigration(t, file), reshape.Options{Hook: hook}); err != nil {
					t.Fatal(err)
				}
				if appended != 1 {
					t.Fatalf("the old release appended %d times, want 1", appended)
				}
				n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "postId", Value: int32(1)}})
				if n != 3 {
					t.Errorf("%d children of post 1, want 3 (one per +1)", n)
				}
				var post bson.Raw
				if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&post); err != nil {
					t.Fatal(err)
				}
				if keep == "{count: commentCount}" {
					if c := post.Lookup("commentCount").AsInt64(); c != 3 {
						t.Errorf("commentCount %d, want 3", c)
					}
				}
				arr, _ := post.Lookup("comments").ArrayOK()
				ids, err := reshape.ChildIDs(post, "comments", first)
				if err != nil {
					t.Fatal(err)
				}
				vals, _ := arr.Values()
				if len(ids) != len(vals) {
					t.Fatalf("%d ids for %d embedded", len(ids), len(vals))
				}
				for _, id := range ids { // the dual read: each embedded one is a child
					if n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}); n != 1 {
						t.Errorf("embedded comment %v is not among the children", id)
					}
				}
			})
		})
	}
}

// TestDownEqualElementsAcrossEpochsKilledMongoDB: down of the extract
// above (three equal "+1" children, two moved at epoch 0 and one at epoch
// 1), stopped dead after its parent update and before it deleted the
// children, then run again: the post holds the three "+1" exactly once
// each (the parent's record of what down embedded finds them held), and
// no child is left.
func TestDownEqualElementsAcrossEpochsKilledMongoDB(t *testing.T) {
	servers(t, "reshape_epoch_down", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		posts := db.Collection("posts")
		plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
		if _, err := posts.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "comments", Value: bson.A{plusOne, plusOne}}}); err != nil {
			t.Fatal(err)
		}
		appended := false
		hook := func(point string, _ int64, _ int) {
			if point == "reshape.parent" && !appended {
				appended = true
				if _, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(1)}},
					bson.D{{Key: "$push", Value: bson.D{{Key: "comments", Value: plusOne}}}}); err != nil {
					t.Error(err)
				}
			}
		}
		m := blogMigration(t, blogFile)
		if _, err := run(t, db, m, reshape.Options{Hook: hook}); err != nil {
			t.Fatal(err)
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
			kill := func(p string, _ int64, _ int) {
				if p == "reshape.down.parent" {
					panic(errKilled)
				}
			}
			if _, err := revert(t, db, m, reshape.Options{Hook: kill}); err != nil {
				t.Fatal(err)
			}
			return false
		}()
		if !killed {
			t.Fatal("down never reached reshape.down.parent")
		}
		if _, err := revert(t, db, m, reshape.Options{}); err != nil {
			t.Fatal(err)
		}
		var post struct {
			Comments     []bson.D `bson:"comments"`
			CommentCount int64    `bson:"commentCount"`
		}
		if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&post); err != nil {
			t.Fatal(err)
		}
		if len(post.Comments) != 3 || post.CommentCount != 0 {
			t.Errorf("post 1 holds %d comments, commentCount %d; want 3 and 0", len(post.Comments), post.CommentCount)
		}
		if n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{}); n != 0 {
			t.Errorf("%d children left, want 0", n)
		}
	})
}
