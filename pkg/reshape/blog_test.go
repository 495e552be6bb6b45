package reshape_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// The new user's blog (issue: posts embedding ever-growing comments):
// posts whose comments are documents, some with an _id and some without,
// and in some posts the same comment twice (two people wrote "+1").
const blogFile = `description: Move the posts' comments into their own collection.
run:
  - extract:
      from: posts
      array: comments
      to: comments
      ref: postId
      keep: {count: commentCount}
`

func blogMigration(t testing.TB, file string) *migration.Migration {
	t.Helper()
	return migrationN(t, 2, file)
}

// migrationN parses file as migration version n.
func migrationN(t testing.TB, n int, file string) *migration.Migration {
	t.Helper()
	m, err := migration.Parse(fmt.Sprintf("%04d_run.yaml", n), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loadBlog inserts posts with comments and returns each post's comments
// as written (a multiset of their Extended JSON, _id left out).
func loadBlog(t testing.TB, db *mongo.Database, posts int) map[int32][]string {
	t.Helper()
	rng := rand.New(rand.NewSource(27))
	want := map[int32][]string{}
	var docs []any
	for p := int32(1); p <= int32(posts); p++ {
		comments := bson.A{}
		for c := 0; c < rng.Intn(9); c++ {
			var cm bson.D
			switch rng.Intn(3) {
			case 0:
				cm = bson.D{{Key: "_id", Value: fmt.Sprintf("c%d-%d", p, c)}, {Key: "by", Value: "ada"}, {Key: "text", Value: fmt.Sprintf("comment %d", c)}}
			case 1:
				cm = bson.D{{Key: "by", Value: "bob"}, {Key: "text", Value: "+1"}} // equal ones, no _id
			default:
				cm = bson.D{{Key: "by", Value: "cy"}, {Key: "text", Value: fmt.Sprintf("c%d", c)}}
			}
			comments = append(comments, cm)
			want[p] = append(want[p], key(cm))
		}
		docs = append(docs, bson.D{{Key: "_id", Value: p}, {Key: "title", Value: fmt.Sprintf("post %d", p)}, {Key: "comments", Value: comments}})
	}
	if _, err := db.Collection("posts").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return want
}

// key is a comment's identity for the exactly-once check: its text and
// author (and its own _id when it had one).
func key(cm bson.D) string {
	var by, text, id any
	for _, e := range cm {
		switch e.Key {
		case "by":
			by = e.Value
		case "text":
			text = e.Value
		case "_id":
			id = e.Value
		}
	}
	return fmt.Sprint(id, "|", by, "|", text)
}

// checkExactlyOnce: every comment of want is, exactly once, either a
// child of its post or still embedded in it, and commentCount counts the
// children.
func checkExactlyOnce(t *testing.T, db *mongo.Database, want map[int32][]string) {
	t.Helper()
	checkMoved(t, db, want, noDupes)
}

// How checkMoved takes comments more than written.
type dupes int

const (
	noDupes     dupes = iota // none
	markedDupes              // no more than the children marked by a {replaced} epoch
	anyDupes                 // any (down's record went with _mongomig)
)

// checkMoved is checkExactlyOnce, or with dupes, no comment lost and what
// is there more (children beyond the count, comments beyond want) as
// dupes allows: the duplicates rule 4 accepts after a whole-document
// replace dropped _mongomig.
func checkMoved(t *testing.T, db *mongo.Database, want map[int32][]string, d dupes) {
	t.Helper()
	got, children, counts, replaced := gather(t, db)
	for id, count := range counts {
		if count != children[id] && (d == noDupes || count > children[id] || (d == markedDupes && children[id]-count > replaced[id])) {
			t.Errorf("post %d: commentCount %d, %d comments in the comments collection (%d marked replaced)", id, count, children[id], replaced[id])
		}
	}
	for p, w := range want {
		g := got[p]
		sort.Strings(w)
		sort.Strings(g)
		if d == noDupes {
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Errorf("post %d: comments\n got %v\nwant %v", p, g, w)
			}
			continue
		}
		left := map[string]int{}
		for _, c := range g {
			left[c]++
		}
		for _, c := range w {
			if left[c] == 0 {
				t.Errorf("post %d: comment %s lost\n got %v\nwant %v", p, c, g, w)
			}
			left[c]--
		}
		if extra := int64(len(g) - len(w)); d == markedDupes && extra > replaced[p] {
			t.Errorf("post %d: %d comments more than written, %d children marked replaced\n got %v\nwant %v", p, extra, replaced[p], g, w)
		}
	}
}

// gather is every post's comments (children and embedded), its children
// and those marked replaced, and its commentCount.
func gather(t *testing.T, db *mongo.Database) (got map[int32][]string, children, counts, marked map[int32]int64) {
	t.Helper()
	ctx := context.Background()
	got, children, counts, marked = map[int32][]string{}, map[int32]int64{}, map[int32]int64{}, map[int32]int64{}
	cur, err := db.Collection("comments").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var cs []bson.D
	if err := cur.All(ctx, &cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		var post int32
		var cm bson.D
		replaced := false
		for _, e := range c {
			switch e.Key {
			case "postId":
				post = e.Value.(int32)
			case "_id":
				id, ok := e.Value.(bson.D)
				if !ok { // a child the new release wrote: its element keeps this _id
					cm = append(cm, e)
				}
				for _, f := range id {
					if f.Key == "key" {
						cm = append(cm, bson.E{Key: "_id", Value: f.Value})
					}
					if ep, ok := f.Value.(bson.D); ok && f.Key == "e" && len(ep) > 0 && ep[0].Key == "replaced" {
						replaced = true
					}
				}
			default:
				cm = append(cm, e)
			}
		}
		got[post] = append(got[post], key(cm))
		children[post]++
		if replaced {
			marked[post]++
		}
	}
	cur, err = db.Collection("posts").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var posts []bson.M
	if err := cur.All(ctx, &posts); err != nil {
		t.Fatal(err)
	}
	for _, p := range posts {
		id := p["_id"].(int32)
		if arr, ok := p["comments"].(bson.A); ok {
			for _, c := range arr {
				got[id] = append(got[id], key(c.(bson.D)))
			}
		}
		var count int64
		switch n := p["commentCount"].(type) {
		case int64:
			count = n
		case int32:
			count = int64(n)
		}
		counts[id] = count
	}
	return got, children, counts, marked
}

// underLock runs fn holding the migration lock, as up does.
func underLock(t testing.TB, db *mongo.Database, fn func(ctx context.Context) error) error {
	t.Helper()
	ctx := context.Background()
	l, err := lease.Acquire(ctx, db.Collection("mongomig_lock"), lease.MigrationLock, lease.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return lease.Hold(ctx, l, fn)
}

func run(t testing.TB, db *mongo.Database, m *migration.Migration, opts reshape.Options) ([]reshape.OpResult, error) {
	var res []reshape.OpResult
	err := underLock(t, db, func(ctx context.Context) error {
		var err error
		res, err = reshape.Run(ctx, db, m, opts)
		return err
	})
	return res, err
}

func options() *mopts.FindOneOptionsBuilder { return mopts.FindOne() }
