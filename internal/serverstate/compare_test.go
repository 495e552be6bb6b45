package serverstate

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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
