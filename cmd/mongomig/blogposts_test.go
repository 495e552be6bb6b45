package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
)

// cmdBlogPosts loads fixtures.BlogUnsetDocs (50 posts at version 0, 47 of
// them embedding 3,434 comments) into the app database of $MONGOMIG_URI.
func cmdBlogPosts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: blogposts")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("blogposts: %v", err)
	}
	defer client.Disconnect(ctx)
	if err := fixtures.LoadBlogUnset(ctx, client.Database("app")); err != nil {
		ts.Fatalf("blogposts: %v", err)
	}
	fmt.Fprintf(ts.Stdout(), "loaded %d posts\n", fixtures.BlogUnsetPosts)
}
