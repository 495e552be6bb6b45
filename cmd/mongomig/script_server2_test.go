package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// scriptCondition answers a script's own conditions: [testserver] holds
// when MONGOMIG_TEST_URI names the second test server (a MongoDB-like
// server that enforces validators).
func scriptCondition(cond string) (bool, error) {
	if cond == "testserver" {
		return os.Getenv("MONGOMIG_TEST_URI") != "", nil
	}
	return false, nil
}

// cmdTestServer: testserver — set MONGOMIG_URI to a database of its own
// (mongomig_test_script_<script>) on the server MONGOMIG_TEST_URI names,
// dropped before the script and after it. Guard it with [testserver].
func cmdTestServer(ts *testscript.TestScript, neg bool, args []string) {
	base := os.Getenv("MONGOMIG_TEST_URI")
	if neg || len(args) != 0 || base == "" {
		ts.Fatalf("usage: [testserver] testserver (MONGOMIG_TEST_URI must be set)")
	}
	name := "mongomig_test_script_" + strings.NewReplacer("/", "_", "-", "_").Replace(ts.Name())
	client, err := mongo.Connect(options.Client().ApplyURI(base))
	if err != nil {
		ts.Fatalf("testserver: %v", err)
	}
	drop := func() {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
		defer dcancel()
		_ = client.Database(name).Drop(dctx)
	}
	drop()
	ts.Defer(func() { drop(); _ = client.Disconnect(context.Background()) })
	ts.Setenv("MONGOMIG_URI", strings.TrimSuffix(base, "/")+"/"+name)
}

// scriptDBName is the database MONGOMIG_URI names, app when it names none.
func scriptDBName(uri string) string {
	if cs, err := connstring.Parse(uri); err == nil && cs.Database != "" {
		return cs.Database
	}
	return "app"
}
