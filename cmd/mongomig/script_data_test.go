package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func scriptDB(ts *testscript.TestScript, what string) (*mongo.Database, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("%s: %v", what, err)
	}
	return client.Database(scriptDBName(ts.Getenv("MONGOMIG_URI"))), func() { _ = client.Disconnect(ctx); cancel() }
}

// cmdInsert: insert COLL FILE.
func cmdInsert(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: insert COLL FILE")
	}
	db, done := scriptDB(ts, "insert")
	defer done()
	var docs []any
	for _, line := range strings.Split(ts.ReadFile(args[1]), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var d bson.D
		if err := bson.UnmarshalExtJSON([]byte(line), false, &d); err != nil {
			ts.Fatalf("insert: %s: %v", line, err)
		}
		docs = append(docs, d)
	}
	if _, err := db.Collection(args[0]).InsertMany(context.Background(), docs); err != nil {
		ts.Fatalf("insert: %v", err)
	}
}

// cmdCount: count COLL FILTER N.
func cmdCount(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: count COLL FILTER N")
	}
	db, done := scriptDB(ts, "count")
	defer done()
	var filter bson.D
	if err := bson.UnmarshalExtJSON([]byte(args[1]), false, &filter); err != nil {
		ts.Fatalf("count: filter %s: %v", args[1], err)
	}
	n, err := db.Collection(args[0]).CountDocuments(context.Background(), filter)
	if err != nil {
		ts.Fatalf("count: %v", err)
	}
	if want, _ := strconv.ParseInt(args[2], 10, 64); n != want {
		ts.Fatalf("count %s %s: %d documents, want %s", args[0], args[1], n, args[2])
	}
}
