package main

import (
	"context"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// cmdRunCmd is the script command `runcmd JSON`: it runs one database
// command, given in Extended JSON, against $MONGOMIG_URI's database app,
// as an application or an operator would (an old release's insert, an
// index created by hand).
func cmdRunCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: runcmd JSON")
	}
	var cmd bson.D
	if err := bson.UnmarshalExtJSON([]byte(args[0]), false, &cmd); err != nil {
		ts.Fatalf("runcmd: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("runcmd: %v", err)
	}
	defer client.Disconnect(ctx)
	if err := client.Database("app").RunCommand(ctx, cmd).Err(); err != nil {
		ts.Fatalf("runcmd %s: %v", args[0], err)
	}
}
