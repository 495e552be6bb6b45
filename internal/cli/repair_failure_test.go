package cli

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestRepairFailureIsOneJSONObjectMongoDB: a repair whose write the
// server refuses (a validator caps commentCount at 1; the post has 3
// comments) fails with exit 1 and, under --json, prints one object on
// stdout (docs/cli.md, "Failures under --json"): the failure, carrying the
// report so far in its details, not the report and then the failure.
func TestRepairFailureIsOneJSONObjectMongoDB(t *testing.T) {
	base := os.Getenv("MONGOMIG_TEST_URI")
	if base == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: the sandbox enforces no validator to refuse a repair's write")
	}
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(base))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(ctx) }()
	db := client.Database("mongomig_cli_repairfail")
	_ = db.Drop(ctx)
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	validator := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "commentCount", Value: bson.D{{Key: "maximum", Value: 1}}}}}}}}
	if err := db.CreateCollection(ctx, "posts", options.CreateCollection().SetValidator(validator)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("posts").InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "commentCount", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("comments").InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "postId", Value: "a"}}, bson.D{{Key: "_id", Value: 2}, {Key: "postId", Value: "a"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "postId", Value: "a"}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := "collections:\n  posts:\n    aggregates:\n      - {field: commentCount, op: count, from: comments, by: postId}\n"
	if err := os.WriteFile(filepath.Join(dir, "0001_posts.yaml"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db.Name()
	r := run(t, false, "--uri", u.String(), "--dir", dir, "--json", "repair")
	got := failureObject(t, r)
	details, _ := got["details"].(map[string]any)
	if r.code != ExitFailure || details == nil || details["result"] == nil {
		t.Errorf("exit %d, failure %v: want exit 1 and the report so far in details.result", r.code, got)
	}
}
