package integrity_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

// TestRepairRefusesMissingCollection: a rule that writes what it finds
// and reads a collection the database does not have (here the misspelt
// `to: post` with onDangling delete, and `from: coments`) would find
// every value out of line and delete every comment, zero every count.
// repair refuses before it writes anything, naming the rule, its file
// and the collection; check still reports.
func TestRepairRefusesMissingCollection(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "integrity_missing")
	school(t, db)
	m, err := migration.Parse("0001_rules.yaml", []byte(`collections:
  comments:
    references:
      - {path: postId, to: post, onDangling: delete}
  posts:
    aggregates:
      - {field: commentCount, op: count, from: coments, by: postId}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := integrity.New(db, []*migration.Migration{m}, integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Repair(ctx, false)
	var me *integrity.MissingCollectionError
	if !errors.As(err, &me) || len(me.Missing) != 2 {
		t.Fatalf("repair = %v, want a MissingCollectionError for post and coments", err)
	}
	for _, want := range []string{"collection post", "collection coments", "(0001_rules.yaml:4:9)", "delete every document of comments", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n, err := db.Collection("comments").CountDocuments(ctx, bson.D{}); err != nil || n != 4 {
		t.Errorf("comments left: %d (%v), want all 4", n, err)
	}
	var post struct{ CommentCount int64 }
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&post); err != nil || post.CommentCount != 2 {
		t.Errorf("post a's commentCount = %d (%v), want 2 unchanged", post.CommentCount, err)
	}
	if _, err := c.Check(ctx); err != nil && !errors.As(err, new(*integrity.OutOfLineError)) {
		t.Errorf("check: %v (it only reports)", err)
	}
}
