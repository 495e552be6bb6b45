package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// uniqueMailFS builds a unique index on customers.mail after a validator.
var uniqueMailFS = fstest.MapFS{
	"0001_unique_mail.yaml": {Data: []byte(`collections:
  customers:
    validator: {$jsonSchema: {bsonType: object, required: [mail]}}
    indexes:
      create:
        - {keys: {mail: 1}, unique: true}
`)},
}

// uniqueBuildFails runs up over customers of which two share a mail, and
// checks what the error says: the index, the collection, the cause in
// mongomig's words, the way to list the documents, what was done and that
// nothing was recorded; and that no index was left behind.
func uniqueBuildFails(t *testing.T, db *mongo.Database) (string, error) {
	t.Helper()
	ctx := context.Background()
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "mail", Value: "a@x"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "mail", Value: "b@x"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "mail", Value: "a@x"}},
	}
	if _, err := db.Collection("customers").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	_, err := newRunner(t, db, uniqueMailFS).Up(ctx)
	var pe *runner.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("want a PartialError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"apply 0001_unique_mail.yaml: customers: createIndexes mail_1 failed: index mail_1 on customers cannot be built: documents share a key (run `mongomig up --dry-run` to list them)",
		"done:\n    customers: collMod",
		"not done: nothing else",
		"migration 1 is not recorded as applied",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if v := ledgerVersions(t, db); len(v) != 0 {
		t.Errorf("failed migration recorded: %v", v)
	}
	specs, err := db.Collection("customers").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == "mail_1" {
			t.Errorf("the failed build left index mail_1: %+v", s)
		}
	}
	return msg, pe.Err
}

// TestUniqueIndexBuildFailure: on the sandbox, FerretDB's SQLite text
// (which names the table, customers_<hash>_mail_1) is not shown.
func TestUniqueIndexBuildFailure(t *testing.T) {
	msg, _ := uniqueBuildFails(t, sandboxtest.Database(t, "app"))
	if strings.Contains(msg, "UNIQUE constraint") || strings.Contains(msg, "2067") {
		t.Errorf("message shows SQLite's text:\n%s", msg)
	}
}

// TestUniqueIndexBuildFailureMongoDB: MongoDB's DuplicateKey answer is kept
// after mongomig's words, for the key value it quotes.
func TestUniqueIndexBuildFailureMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_unique_build", "the sandbox's answer is TestUniqueIndexBuildFailure")
	msg, serverErr := uniqueBuildFails(t, db)
	if !probe.HasCode(serverErr, probe.CodeDuplicateKey) {
		t.Skipf("the server does not answer a unique index build over shared keys with DuplicateKey (11000), whose text mongomig keeps: it answered %v", serverErr)
	}
	if !strings.Contains(msg, "; the server: ") || !strings.Contains(msg, "E11000") {
		t.Errorf("message lacks MongoDB's E11000 text:\n%s", msg)
	}
}
