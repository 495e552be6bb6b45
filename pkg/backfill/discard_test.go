package backfill_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestBackfillRefusesUnsetComments: the new user's blog, migration 2 only
// `unset: [comments]`, applied (by a release that did not check, here with
// discard: true, which is not checksummed, then removed from the file):
// the backfill refuses with a DiscardError carrying the collection, the
// migration, the step, the field and the count, having written nothing;
// with discard: true it runs, logging the count first.
func TestBackfillRefusesUnsetComments(t *testing.T) {
	rec := &cmdlog.Recorder{}
	s := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, s.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	testBackfillRefusesUnsetComments(t, db, rec)
}

func TestBackfillRefusesUnsetCommentsMongoDB(t *testing.T) {
	rec := &cmdlog.Recorder{}
	sandboxtest.MongoDB(t, "mongomig_test_discard_refused", "TestBackfillRefusesUnsetComments runs on the sandbox")
	db := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database("mongomig_test_discard_refused")
	testBackfillRefusesUnsetComments(t, db, rec)
}

func testBackfillRefusesUnsetComments(t *testing.T, db *mongo.Database, rec *cmdlog.Recorder) {
	ctx := context.Background()
	if err := fixtures.LoadBlogUnset(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(true)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	_, err := backfill.Run(ctx, fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(false)), backfill.Options{})
	var de *backfill.DiscardError
	if !errors.As(err, &de) {
		t.Fatalf("backfill: %v, want a DiscardError", err)
	}
	if de.Collection != "posts" || de.Migration != 2 || de.Step != 0 || de.Op != migration.OpUnset || de.Field != "comments" || de.Pos.Line != 5 ||
		de.Count.Documents != fixtures.BlogUnsetWithComments || de.Count.Elements != fixtures.BlogUnsetComments {
		t.Errorf("error = %+v", de)
	}
	want := "posts: 0002_comments_collection.yaml:5:17: unset comments (migration 2, upgrade step 1) removes 47 non-empty comments arrays, 3,434 elements from the documents below version 2, and no earlier step of the migration keeps it; the backfill wrote nothing"
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	for _, name := range []string{"update", "insert", "delete", "findAndModify"} {
		if cmds := rec.Named(name); len(cmds) > 0 {
			t.Errorf("the refused backfill sent %s: %s", name, cmds[0])
		}
	}
	if n := countElements(t, db); n != fixtures.BlogUnsetComments {
		t.Fatalf("after the refusal %d comments remain, want %d", n, fixtures.BlogUnsetComments)
	}

	var mu sync.Mutex
	var logged []events.BackfillDiscards
	log := events.LoggerFunc(func(e events.Entry) {
		if d, ok := e.(events.BackfillDiscards); ok {
			mu.Lock()
			logged = append(logged, d)
			mu.Unlock()
		}
	})
	res, err := backfill.Run(ctx, fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(true), runner.WithLogger(log)), backfill.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Collections[0].Upgraded; got != fixtures.BlogUnsetPosts {
		t.Errorf("upgraded %d, want %d", got, fixtures.BlogUnsetPosts)
	}
	if len(logged) != 1 || logged[0].Summary != "removes 47 non-empty comments arrays, 3,434 elements" {
		t.Errorf("logged %+v", logged)
	}
	if n := countElements(t, db); n != 0 {
		t.Errorf("%d comments remain after the allowed backfill", n)
	}
}

// countElements counts the comments embedded in the posts.
func countElements(t *testing.T, db *mongo.Database) int {
	t.Helper()
	cur, err := db.Collection("posts").Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		Comments []bson.D `bson:"comments"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		n += len(d.Comments)
	}
	return n
}

// TestBackfillUnsetRefusedWithoutData: an unset the file does not account
// for is refused even where no document holds the field now (an old
// release may write it again); the message says so.
func TestBackfillUnsetRefusedWithoutData(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "title", Value: "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(true)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := backfill.Run(ctx, fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(false)), backfill.Options{})
	var de *backfill.DiscardError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "none now: no document below version 2 holds data at comments, but an old release may write it again") {
		t.Fatalf("backfill: %v", err)
	}
}
