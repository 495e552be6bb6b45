package reshape_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// An old release's post, as its Go struct knows it: no _mongomig (and,
// for the count, a release that already keeps commentCount, as an old
// release must keep the fields it does not know: docs/file-format.md).
type oldComment struct {
	By   string `bson:"by"`
	Text string `bson:"text"`
}

type oldPost struct {
	ID           int32        `bson:"_id"`
	Title        string       `bson:"title"`
	Comments     []oldComment `bson:"comments,omitempty"`
	CommentCount int64        `bson:"commentCount,omitempty"`
}

// structAppend is the old release appending c: it reads the post into its
// struct, appends, and replaces the whole post (dropping _mongomig).
func structAppend(t *testing.T, db *mongo.Database, id int32, c oldComment) {
	t.Helper()
	ctx := context.Background()
	var p oldPost
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&p); err != nil {
		t.Fatal(err)
	}
	p.Comments = append(p.Comments, c)
	if _, err := db.Collection("posts").ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, p); err != nil {
		t.Fatal(err)
	}
}

// dualRead is what a reader of the new release gets for post id: its
// children, then its embedded elements whose child _id is not among them
// (docs/file-format.md), each as by|text.
func dualRead(t *testing.T, db *mongo.Database, id int32, first int) []string {
	t.Helper()
	ctx := context.Background()
	cur, err := db.Collection("comments").Find(ctx, bson.D{{Key: "postId", Value: id}})
	if err != nil {
		t.Fatal(err)
	}
	var children []bson.Raw
	if err := cur.All(ctx, &children); err != nil {
		t.Fatal(err)
	}
	var got []string
	have := map[string]bool{}
	for _, c := range children {
		have[c.Lookup("_id").String()] = true
		got = append(got, c.Lookup("by").StringValue()+"|"+c.Lookup("text").StringValue())
	}
	var post bson.Raw
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&post); err != nil {
		t.Fatal(err)
	}
	ids, err := reshape.ChildIDs(post, "comments", first)
	if err != nil {
		t.Fatal(err)
	}
	arr, _ := post.Lookup("comments").ArrayOK()
	vals, _ := arr.Values()
	for i, v := range vals {
		raw, _ := bson.Marshal(bson.D{{Key: "i", Value: ids[i]}})
		if have[bson.Raw(raw).Lookup("i").String()] {
			continue
		}
		d := v.Document()
		got = append(got, d.Lookup("by").StringValue()+"|"+d.Lookup("text").StringValue())
	}
	sort.Strings(got)
	return got
}

func sorted(s ...string) []string { sort.Strings(s); return s }

var keeps = []struct {
	name, keep string
	first      int
}{{"nothing", "nothing", 0}, {"count", "{count: commentCount}", 0}, {"first", "{first: 1}", 1}}

// TestExtractStructReplaceAfterMoveMongoDB: the write loss of issue 27's
// epoch. Post 1 holds a "+1" without an _id; the extract moves it (its
// guarded update removes it and advances the post's epoch); then, at
// that command boundary, an old release reads the post into its struct
// (which does not know _mongomig), appends a new "+1" equal to the moved
// one and replaces the whole post. The epoch went back to 0 with it, so
// the next pass derived the moved one's child _id for the new "+1",
// took it for written, and removed it: lost. Every "+1" must be read
// (and with keep: count, counted) after the move.
func TestExtractStructReplaceAfterMoveMongoDB(t *testing.T) {
	for _, k := range keeps {
		t.Run(k.name, func(t *testing.T) {
			servers(t, "reshape_struct_"+k.name, func(t *testing.T, db *mongo.Database) {
				ctx := context.Background()
				plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
				first := bson.D{{Key: "by", Value: "ada"}, {Key: "text", Value: "first"}}
				comments := bson.A{plusOne}
				want := sorted("ann|+1", "ann|+1")
				if k.first > 0 {
					comments = bson.A{first, plusOne}
					want = sorted("ada|first", "ann|+1", "ann|+1")
				}
				if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "title", Value: "t"}, {Key: "comments", Value: comments}}); err != nil {
					t.Fatal(err)
				}
				replaced := 0
				hook := func(point string, _ int64, _ int) {
					if point == "reshape.parent" && replaced == 0 {
						replaced++
						structAppend(t, db, 1, oldComment{By: "ann", Text: "+1"})
					}
				}
				file := "run:\n  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: " + k.keep + "}\n"
				res, err := run(t, db, blogMigration(t, file), reshape.Options{Hook: hook})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(res[0].Summary, "1 of them were written back by a whole-document replace that dropped _mongomig") {
					t.Errorf("summary %q does not count the child made after the replace", res[0].Summary)
				}
				if replaced != 1 {
					t.Fatalf("the old release replaced the post %d times, want 1", replaced)
				}
				if got := dualRead(t, db, 1, k.first); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("post 1 reads %v, want %v", got, want)
				}
				if k.name == "count" {
					var p oldPost
					_ = db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&p)
					if p.CommentCount != 2 {
						t.Errorf("commentCount %d, want 2", p.CommentCount)
					}
				}
			})
		})
	}
}

// TestExtractStaleCopyReplaceMongoDB: an old release that replaces the
// post with a copy it read before the extract's guarded update (the copy
// holds _mongomig as it was), appending a comment: the moved "+1" it puts
// back is not moved twice, and what it appended (a different comment, or
// one more equal "+1") is moved once: exactly once, as before.
func TestExtractStaleCopyReplaceMongoDB(t *testing.T) {
	for _, appended := range []string{"other", "equal"} {
		t.Run(appended, func(t *testing.T) {
			servers(t, "reshape_stale_"+appended, func(t *testing.T, db *mongo.Database) {
				ctx := context.Background()
				posts := db.Collection("posts")
				plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
				if _, err := posts.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "comments", Value: bson.A{plusOne}}}); err != nil {
					t.Fatal(err)
				}
				add, want := plusOne, sorted("ann|+1", "ann|+1")
				if appended == "other" {
					add, want = bson.D{{Key: "by", Value: "bob"}, {Key: "text", Value: "late"}}, sorted("ann|+1", "bob|late")
				}
				var copied bson.D
				done := false
				hook := func(point string, _ int64, _ int) {
					switch {
					case point == "reshape.children" && copied == nil: // read before the update
						if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&copied); err != nil {
							t.Error(err)
						}
					case point == "reshape.parent" && !done: // replaced after it
						done = true
						for i, e := range copied {
							if e.Key == "comments" {
								copied[i].Value = append(e.Value.(bson.A), add)
							}
						}
						if _, err := posts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}, copied); err != nil {
							t.Error(err)
						}
					}
				}
				if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Hook: hook}); err != nil {
					t.Fatal(err)
				}
				if !done {
					t.Fatal("the old release never replaced the post")
				}
				if got := dualRead(t, db, 1, 0); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("post 1 reads %v, want %v", got, want)
				}
				var p oldPost
				_ = posts.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&p)
				if p.CommentCount != 2 || len(p.Comments) != 0 {
					t.Errorf("commentCount %d, %d embedded; want 2 and 0", p.CommentCount, len(p.Comments))
				}
			})
		})
	}
}

// checkNoLoss: post id reads (dualRead) every comment of want; what it
// reads more are duplicates rule 4 accepts, each a child marked by its
// {replaced} epoch (so at most that many); exact asks for none.
func checkNoLoss(t *testing.T, db *mongo.Database, id int32, first int, want []string, exact bool) {
	t.Helper()
	got := dualRead(t, db, id, first)
	left := map[string]int{}
	for _, g := range got {
		left[g]++
	}
	for _, w := range want {
		if left[w] == 0 {
			t.Errorf("post %d: %s lost (reads %v, want %v)", id, w, got, want)
			continue
		}
		left[w]--
	}
	extra := 0
	for _, n := range left {
		extra += n
	}
	marked, _ := db.Collection("comments").CountDocuments(context.Background(),
		bson.D{{Key: "postId", Value: id}, {Key: "_id.e.replaced", Value: bson.D{{Key: "$exists", Value: true}}}})
	switch {
	case exact && extra > 0:
		t.Errorf("post %d reads %v, want exactly %v", id, got, want)
	case int64(extra) > marked:
		t.Errorf("post %d: %d duplicates, only %d children marked replaced (reads %v)", id, extra, marked, got)
	}
}

// TestExtractKilledThenStructReplaceMongoDB: the move of post 1 (a "+1"
// without an _id) stops dead at each point it names; before the resume
// an old release reads the post into its struct, appends an equal "+1"
// and replaces the post (dropping _mongomig). No comment is lost. Killed
// after its children were written and before the guarded update, the
// struct writes back the unmoved "+1", which the resume cannot tell from
// a new one written after a move (the same document): it is moved again,
// a duplicate marked by its {replaced} epoch (rule 4); at every other
// point every comment is moved exactly once.
func TestExtractKilledThenStructReplaceMongoDB(t *testing.T) {
	points := []string{"reshape.read", "reshape.stamp", "reshape.derive", "reshape.children", "reshape.parent", "reshape.batch"}
	servers(t, "reshape_kill_struct", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		for _, point := range points {
			t.Run(point, func(t *testing.T) {
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
				if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "title", Value: "t"}, {Key: "comments", Value: bson.A{plusOne}}}); err != nil {
					t.Fatal(err)
				}
				kill := func(p string, _ int64, _ int) {
					if p == point {
						panic(errKilled)
					}
				}
				died := func() (died bool) {
					defer func() {
						if r := recover(); r != nil {
							if r != errKilled {
								panic(r)
							}
							died = true
						}
					}()
					_, _ = run(t, db, blogMigration(t, blogFile), reshape.Options{Hook: kill})
					return false
				}()
				if !died {
					t.Fatalf("%s never reached", point)
				}
				structAppend(t, db, 1, oldComment{By: "ann", Text: "+1"})
				if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{}); err != nil {
					t.Fatal(err)
				}
				checkNoLoss(t, db, 1, 0, sorted("ann|+1", "ann|+1"), point != "reshape.children")
				var p oldPost
				_ = db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&p)
				if p.CommentCount != 2 || len(p.Comments) != 0 {
					t.Errorf("commentCount %d, %d embedded; want 2 and 0", p.CommentCount, len(p.Comments))
				}
			})
		}
	})
}

// TestExtractValidatorRefusesArrayMongoDB: the epoch is stamped on a post
// that still holds its comments, so a posts validator that refuses the
// array (the new shape only, validationLevel strict) stops the extract
// with an error saying what the validator must accept, before any child
// is written; one that accepts both shapes lets it move everything.
func TestExtractValidatorRefusesArrayMongoDB(t *testing.T) {
	shapes := map[string]bson.D{
		"new shape only": {{Key: "comments", Value: bson.D{{Key: "$exists", Value: false}}}},
		"both shapes": {{Key: "$or", Value: bson.A{bson.D{{Key: "comments", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "comments", Value: bson.D{{Key: "$type", Value: "array"}}}}}}},
	}
	for name, validator := range shapes {
		t.Run(name, func(t *testing.T) {
			servers(t, "reshape_validator", func(t *testing.T, db *mongo.Database) {
				ctx := context.Background()
				r, err := probe.Probe(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Capabilities.Validators.Available {
					t.Skip("validators: " + r.Capabilities.Validators.Reason)
				}
				plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
				if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "comments", Value: bson.A{plusOne}}}); err != nil {
					t.Fatal(err)
				}
				cmd := bson.D{{Key: "collMod", Value: "posts"}, {Key: "validator", Value: validator}, {Key: "validationLevel", Value: "strict"}}
				if err := db.RunCommand(ctx, cmd).Err(); err != nil {
					t.Fatal(err)
				}
				_, err = run(t, db, blogMigration(t, blogFile), reshape.Options{})
				n, _ := db.Collection("comments").CountDocuments(ctx, bson.D{})
				if name == "both shapes" {
					if err != nil || n != 1 {
						t.Fatalf("extract: %v, %d children; want it done with 1", err, n)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), "the validator of posts must accept documents that still hold comments") {
					t.Fatalf("extract: %v; want the validator named", err)
				}
				if got := dualRead(t, db, 1, 0); fmt.Sprint(got) != "[ann|+1]" || n != 0 {
					t.Errorf("post 1 reads %v with %d children; want the +1 still embedded, none moved", got, n)
				}
			})
		})
	}
}

// TestExtractDualReadDuringMoveMongoDB: a reader of the new release
// between every two commands of the move (after the stamp, after the
// children were written and before the guarded update, after it) reads
// every comment of the blog exactly once: an element that is both
// embedded and a child is left out of the embedded ones by ChildIDs.
func TestExtractDualReadDuringMoveMongoDB(t *testing.T) {
	servers(t, "reshape_dual", func(t *testing.T, db *mongo.Database) {
		want := loadBlog(t, db, 6)
		byText := map[int32][]string{}
		for p, w := range want {
			for _, k := range w {
				f := strings.Split(k, "|") // _id|by|text
				byText[p] = append(byText[p], f[1]+"|"+f[2])
			}
			sort.Strings(byText[p])
		}
		reads := 0
		hook := func(point string, _ int64, _ int) {
			switch point {
			case "reshape.stamp", "reshape.children", "reshape.parent":
			default:
				return
			}
			for p := int32(1); p <= 6; p++ {
				reads++
				if got := dualRead(t, db, p, 0); fmt.Sprint(got) != fmt.Sprint(byText[p]) {
					t.Errorf("at %s, post %d reads %v, want %v", point, p, got, byText[p])
				}
			}
		}
		if _, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Batch: 2, Hook: hook}); err != nil {
			t.Fatal(err)
		}
		if reads == 0 {
			t.Fatal("no read during the move")
		}
	})
}

// TestExtractStaleCopyBeforeStampMongoDB: a copy an old release read
// before the move first stamped the post holds no _mongomig: replaced
// after the move (with a comment appended), it is the same document as a
// struct's replace after the move with two new comments, so what it puts
// back is moved again as new. Nothing is lost, and every child that may
// be a duplicate is marked and counted.
func TestExtractStaleCopyBeforeStampMongoDB(t *testing.T) {
	servers(t, "reshape_stale_early", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		posts := db.Collection("posts")
		plusOne := bson.D{{Key: "by", Value: "ann"}, {Key: "text", Value: "+1"}}
		if _, err := posts.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "comments", Value: bson.A{plusOne}}}); err != nil {
			t.Fatal(err)
		}
		var copied bson.D
		done := false
		hook := func(point string, _ int64, _ int) {
			switch {
			case point == "reshape.read" && copied == nil: // before the stamp
				if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&copied); err != nil {
					t.Error(err)
				}
			case point == "reshape.parent" && !done:
				done = true
				for i, e := range copied {
					if e.Key == "comments" {
						copied[i].Value = append(e.Value.(bson.A), bson.D{{Key: "by", Value: "bob"}, {Key: "text", Value: "late"}})
					}
				}
				if _, err := posts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}, copied); err != nil {
					t.Error(err)
				}
			}
		}
		res, err := run(t, db, blogMigration(t, blogFile), reshape.Options{Hook: hook})
		if err != nil {
			t.Fatal(err)
		}
		if !done {
			t.Fatal("the old release never replaced the post")
		}
		checkNoLoss(t, db, 1, 0, sorted("ann|+1", "bob|late"), false)
		if got := dualRead(t, db, 1, 0); len(got) != 3 {
			t.Errorf("post 1 reads %v: want the put-back +1 moved again (a marked duplicate)", got)
		}
		if !strings.Contains(res[0].Summary, "2 of them were written back by a whole-document replace") {
			t.Errorf("summary %q does not count the 2 children made after the replace", res[0].Summary)
		}
	})
}
