package report_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// renameThenIndex is the acceptance scenario of a rolling deploy: 0001 creates a unique
// index on email; 0002 renames email to contact.email, drops email_1 and
// creates a unique index on contact.email.
var renameThenIndex = fstest.MapFS{
	"0001_unique_email.yaml": {Data: []byte(`collections:
  users:
    indexes:
      create:
        - {keys: {email: 1}, unique: true}
`)},
	"0002_contact.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
    indexes:
      drop: [email_1]
      create:
        - {keys: {contact.email: 1}, unique: true}
`)},
}

// TestIndexPredictionUsesStoredDocuments: `up` builds
// each migration's index on the documents as they are stored when it
// applies the migration (upgrades are lazy: nothing has run 0002's
// rename then), so on 400 users at version 0 with distinct emails email_1
// builds and contact.email_1 fails: none of them has contact.email, and a
// non-sparse unique index keys a missing field as null (MongoDB's manual,
// core/index-unique, "Unique Index and Missing Field"; server2 does the
// same).
// The dry run used to predict both after the pending upgrades: email_1
// failing with 399 collisions, contact.email_1 building.
func TestIndexPredictionUsesStoredDocuments(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	var docs []any
	for i := range 400 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}})
	}
	if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	rep, err := dryRun(t, db, renameThenIndex, 2, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.IndexBuilds) != 2 {
		t.Fatalf("index builds %+v", rep.IndexBuilds)
	}
	email, contact := rep.IndexBuilds[0], rep.IndexBuilds[1]
	if email.Index != "email_1" || email.Fails() {
		t.Errorf("email_1: %+v, want it to build (every stored email differs)", email)
	}
	if contact.Index != "contact.email_1" || contact.Duplicates != 399 || contact.MissingAsNull != 399 || !rep.WouldReject {
		t.Errorf("contact.email_1: %+v (wouldReject %v), want 399 documents colliding on a missing contact.email", contact, rep.WouldReject)
	}
}

// TestIndexBuildHidesKeyValues: a dry-run report is
// posted as a pull-request comment, and the pull request chooses the
// index ({ssn: 1}); the colliding key values are production data. By
// default the report gives counts and _ids only; ShowKeyValues (the
// CLI's --show-values) puts the values in.
func TestIndexBuildHidesKeyValues(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := fstest.MapFS{"0001_ssn.yaml": {Data: []byte("collections:\n  people:\n    indexes:\n      create:\n        - {keys: {ssn: 1}, unique: true}\n")}}
	if _, err := db.Collection("people").InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "ssn", Value: "078-05-1120"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "ssn", Value: "078-05-1120"}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, show := range []bool{false, true} {
		rep, err := dryRun(t, db, fsys, 1, report.Options{ShowKeyValues: show})
		if err != nil {
			t.Fatal(err)
		}
		b := rep.IndexBuilds[0]
		if len(b.Collisions) != 1 || b.Collisions[0].Count != 2 || len(b.Collisions[0].IDs) != 2 {
			t.Fatalf("show %v: %+v, want one key shared by _ids 1 and 2", show, b)
		}
		if got := strings.Contains(string(b.Collisions[0].Key), "078-05-1120"); got != show {
			t.Errorf("show %v: key %q", show, b.Collisions[0].Key)
		}
	}
}
