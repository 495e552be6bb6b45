package lifecycle

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

func rawOpts(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConstraintCommandDocuments pins the documents of MongoDB's sequence
// (checkValidationOptionsCanBeUsed,
// src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp):
// the prepare flag alone, then the level alone (never with a validator);
// lowering is strict with the flag cleared (a validator change is refused
// while either holds; the server's message names prepare false).
func TestConstraintCommandDocuments(t *testing.T) {
	for _, c := range []struct {
		got  bson.D
		want string
	}{
		{PrepareFields(), `{"prepareConstraintValidationLevel":true}`},
		{RaiseFields(), `{"validationLevel":"constraint"}`},
		{LowerFields(), `{"validationLevel":"strict","prepareConstraintValidationLevel":false}`},
	} {
		b, _ := bson.MarshalExtJSON(c.got, false, false)
		if string(b) != c.want {
			t.Errorf("got %s, want %s", b, c.want)
		}
	}
}

// TestHeldAtConstraint: at constraint, or prepared for it (a failed raise
// leaves the flag set: MongoDB's sharded constraint tests check it
// survives), a validator change must be preceded by the lowering.
func TestHeldAtConstraint(t *testing.T) {
	for _, c := range []struct {
		opts bson.D
		held bool
	}{
		{bson.D{{Key: "validationLevel", Value: "constraint"}}, true},
		{bson.D{{Key: "validationLevel", Value: "strict"}, {Key: "prepareConstraintValidationLevel", Value: true}}, true},
		{bson.D{{Key: "validationLevel", Value: "strict"}, {Key: "prepareConstraintValidationLevel", Value: false}}, false},
		{bson.D{{Key: "validationLevel", Value: "moderate"}}, false},
		{bson.D{}, false},
	} {
		if got := HeldAtConstraint(rawOpts(t, c.opts)); got != c.held {
			t.Errorf("HeldAtConstraint(%v) = %v", c.opts, got)
		}
	}
	if HeldAtConstraint(nil) || AtConstraint(nil) {
		t.Error("no options held at constraint")
	}
}

// TestStrictForConstraint: a validator is never sent with constraint (the
// server refuses the level in the collMod that changes the validator);
// it goes as strict, raised when the window closes.
func TestStrictForConstraint(t *testing.T) {
	doc := bson.D{{Key: "collMod", Value: "users"}, {Key: "validator", Value: bson.D{}}, {Key: "validationLevel", Value: "constraint"}}
	out, ok := StrictForConstraint(doc)
	if !ok || out[2].Value != "strict" || doc[2].Value != "constraint" {
		t.Fatalf("out %v ok %v, doc %v", out, ok, doc)
	}
	if _, ok := StrictForConstraint(bson.D{{Key: "validationLevel", Value: "moderate"}}); ok {
		t.Error("moderate rewritten")
	}
	ms := []*migration.Migration{
		{Version: 1, Collections: []*migration.Collection{{Name: "users", ValidationLevel: migration.LevelConstraint}}},
		{Version: 2, Collections: []*migration.Collection{{Name: "users", ValidationLevel: migration.LevelModerate}}},
	}
	if !ConstraintAt(ms, "users", 1) || ConstraintAt(ms, "users", 2) || ConstraintAt(ms, "users", 0) {
		t.Error("ConstraintAt")
	}
}
