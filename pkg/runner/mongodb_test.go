package runner_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestUpEnforcesOnMongoDB applies the samples to the real MongoDB named by
// MONGOMIG_TEST_URI and checks what the sandbox cannot: the server
// enforces the validators mongomig sent, with their level and action.
func TestUpEnforcesOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_runner", "no real MongoDB to check validator enforcement on (the commands sent are checked on the sandbox by TestUpFromEmptyThenNothingPending)")
	ctx := context.Background()
	// Every sample validator the users checks below depend on is
	// enforceable once enum is written as a pattern (orders' keeps
	// additionalProperties, which nothing below writes to).
	fsys, refused := fixtures.EnforceableSamples(t, db)
	applied, err := newRunner(t, db, fsys, runner.WithClientSideValidators(slices.Sorted(maps.Keys(refused))...)).Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Only the validators asked to be client-side are; every other one was
	// read back as sent.
	for _, a := range applied.Applied {
		for _, c := range a.ClientSideValidators {
			if len(refused[c]) == 0 {
				t.Errorf("%s: validator of %s client-side only on a server with validators", a.File, c)
			}
		}
		for _, c := range a.Commands {
			if len(refused[c.Collection]) == 0 && c.Outcome != runner.OutcomeOK {
				t.Errorf("%s: %s %s: %s (%s)", a.File, c.Collection, c.Name, c.Outcome, c.Note)
			}
		}
	}
	// users (0003): moderate, error: a new user without contact is refused.
	// The window is open (the collection was never proven upgraded), so a
	// document without version is checked as version 0 against 0001's
	// schema: the new users carry the current version, 3.
	_, err = db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "x"}, {Key: "status", Value: "active"}, {Key: "version", Value: int32(3)}})
	if !isValidationFailure(err) {
		t.Errorf("invalid user accepted: %v", err)
	}
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "x"}, {Key: "status", Value: "active"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "x@y"}}}, {Key: "version", Value: int32(3)}}); err != nil {
		t.Errorf("valid user refused: %v", err)
	}
	// comments (0004): action warn: an invalid comment is accepted.
	if _, err := db.Collection("comments").InsertOne(ctx, bson.D{{Key: "text", Value: "old field"}}); err != nil {
		t.Errorf("warn action refused a write: %v", err)
	}
	// The options MongoDB reports match the files.
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "users"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v", err)
	}
	opts := specs[0].Options
	if opts.Lookup("validationLevel").StringValue() != "moderate" || opts.Lookup("validationAction").StringValue() != "error" {
		t.Errorf("users options = %s", opts)
	}
}

func isValidationFailure(err error) bool {
	var we mongo.WriteException
	if e, ok := err.(mongo.WriteException); ok {
		we = e
		for _, w := range we.WriteErrors {
			if w.Code == 121 {
				return true
			}
		}
	}
	return false
}
