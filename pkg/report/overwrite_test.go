package report_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// TestValidateCountsARefusedOverwrite: a user whose contact.email the
// current release wrote while email was still there cannot be upgraded
// by `rename: {email: contact.email}` without destroying a value:
// validate counts it among the upgrade errors, with the step's
// message and never the values; a user whose target holds the same value
// upgrades.
func TestValidateCountsARefusedOverwrite(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := fstest.MapFS{"0001_contact.yaml": {Data: []byte(`collections:
  users:
    validator:
      $jsonSchema: {bsonType: object, required: [contact]}
    upgrade:
      - rename: {email: contact.email}
`)}}
	if _, err := db.Collection("users").InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: "old@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "new@x"}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "email", Value: "same@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "same@x"}}}},
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := newReporter(t, db, fsys).Validate(ctx, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Collections[0]
	if len(c.UpgradeErrors) != 1 || c.UpgradeErrors[0].Count != 1 || c.Failing != 1 {
		t.Fatalf("upgrade errors %+v, failing %d: want user 1 alone", c.UpgradeErrors, c.Failing)
	}
	if msg := c.UpgradeErrors[0].Message; !strings.Contains(msg, "never overwrites") || strings.Contains(msg, "new@x") || strings.Contains(msg, "old@x") {
		t.Errorf("message %q", msg)
	}
}
