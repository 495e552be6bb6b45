package serverstate

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// A level or action no applied migration declares is the collection's own
// (an omitted validationLevel/validationAction keeps the current setting:
// MongoDB's collMod changes only the options it is given,
// src/mongo/db/catalog/coll_mod.cpp): Compare leaves it alone, so a
// takeover never moves a moderate collection to strict. A declared one
// that differs is put back.
func TestCompareLeavesUndeclaredSettings(t *testing.T) {
	v := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"name"}}}}}
	raw, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	server := Collection{Exists: true, Validator: raw, Level: "moderate", Action: "warn"}
	undeclared := Declared{Name: "users", Validator: v, From: 2}
	if diffs, fixes := Compare(undeclared, server); len(diffs) != 0 || len(fixes) != 0 {
		t.Errorf("nothing declared: differences %+v, fixes %+v; want none", diffs, fixes)
	}
	declared := undeclared
	declared.Level, declared.Action = "strict", "warn"
	diffs, fixes := Compare(declared, server)
	if len(diffs) != 1 || diffs[0].What != "validationLevel" || diffs[0].Found != "moderate" || diffs[0].Declared != "strict" {
		t.Errorf("strict declared: differences %+v; want the level only", diffs)
	}
	if len(fixes) != 1 || len(fixes[0].SetOptions) != 1 || fixes[0].SetOptions[0].Key != "validationLevel" || fixes[0].SetOptions[0].Value != "strict" {
		t.Errorf("strict declared: fixes %+v; want collMod validationLevel strict only", fixes)
	}
}

// An index a later migration rebuilds (dropped and built again with new
// keys or options) or changes in place (hidden, expireAfterSeconds) is
// declared as it stands after that migration: a takeover or a later up's
// reassert must not take it back to the first definition.
func TestDeclareFollowsRebuildsAndChanges(t *testing.T) {
	ttl, later := int64(3600), int64(60)
	hidden := true
	first := &migration.Migration{Version: 1, Collections: []*migration.Collection{{Name: "sessions", Indexes: migration.Indexes{
		Create: []migration.Index{{Name: "token_1", Keys: bson.D{{Key: "token", Value: 1}}}, {Name: "seen_1", Keys: bson.D{{Key: "seen", Value: 1}}, ExpireAfterSeconds: &ttl}},
	}}}}
	second := &migration.Migration{Version: 2, Collections: []*migration.Collection{{Name: "sessions", Indexes: migration.Indexes{
		Rebuild: []migration.Index{{Name: "token_1", Keys: bson.D{{Key: "token", Value: 1}}, Unique: true}},
		Change:  []migration.IndexChange{{Name: "seen_1", ExpireAfterSeconds: &later, Hidden: &hidden}},
	}}}}
	all := func(int64) bool { return true }
	d := Declare([]*migration.Migration{first, second}, all)
	if len(d) != 1 {
		t.Fatalf("declared %+v; want sessions only", d)
	}
	if tok := d[0].Indexes["token_1"]; !tok.Unique || d[0].IndexFrom["token_1"] != 2 {
		t.Errorf("token_1 declared %+v from %d; want the rebuild's unique index, from 2", tok, d[0].IndexFrom["token_1"])
	}
	seen := d[0].Indexes["seen_1"]
	if seen.ExpireAfterSeconds == nil || *seen.ExpireAfterSeconds != 60 || !seen.Hidden || d[0].IndexFrom["seen_1"] != 2 {
		t.Errorf("seen_1 declared %+v from %d; want expireAfterSeconds 60, hidden, from 2", seen, d[0].IndexFrom["seen_1"])
	}
	onlyFirst := Declare([]*migration.Migration{first, second}, func(v int64) bool { return v == 1 })
	if tok := onlyFirst[0].Indexes["token_1"]; tok.Unique {
		t.Errorf("with 2 not applied, token_1 declared %+v; want the first definition", tok)
	}
}
