package lifecycle

// MongoDB 9.0's validationLevel constraint, as a migration file asks for
// it: `validationLevel: constraint` on a collection whose documents carry
// versions means "strict until the validator window closes, then
// constraint". The backfill's proof (no document at another version than
// the current one, re-checked under the lock after the tightening collMod)
// is what lets the server accept the level: MongoDB scans the collection
// for a document the validator refuses before it sets it
// (noDocumentsViolatingValidator, src/mongo/db/shard_role/ddl/collmod_cmd.cpp).
//
// The server's rules (checkValidationOptionsCanBeUsed,
// src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp):
//   - the level becomes constraint only from strict, only after a collMod
//     that set prepareConstraintValidationLevel: true, and never in the
//     collMod that changes the validator;
//   - at constraint, or while prepareConstraintValidationLevel is set, the
//     validator cannot change (the prepare flag also refuses
//     bypassDocumentValidation: src/mongo/db/shard_role/ddl/coll_mod.idl);
//     lowering the level to strict (and clearing the flag, as the server's
//     own message says) comes first;
//   - constraint with validationAction warn is refused (lint refuses it).

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

const (
	levelKey   = "validationLevel"
	prepareKey = "prepareConstraintValidationLevel"
)

// ConstraintAt reports whether the files declare validationLevel
// constraint for coll as of migration at.
func ConstraintAt(ms []*migration.Migration, coll string, at int64) bool {
	return migration.StateBefore(ms, coll, at+1).Level == migration.LevelConstraint
}

// PrepareFields is the first collMod of the raise: the flag MongoDB
// requires before the level.
func PrepareFields() bson.D { return bson.D{{Key: prepareKey, Value: true}} }

// RaiseFields is the second: the level, alone (no validator in it).
func RaiseFields() bson.D {
	return bson.D{{Key: levelKey, Value: string(migration.LevelConstraint)}}
}

// LowerFields is the collMod sent before a validator change to a
// collection held at constraint (or prepared for it): strict, and the
// prepare flag cleared.
func LowerFields() bson.D {
	return bson.D{{Key: levelKey, Value: string(migration.LevelStrict)}, {Key: prepareKey, Value: false}}
}

// HeldAtConstraint reports whether a collection's listCollections
// options show it at constraint or prepared for it: either refuses a
// validator change.
func HeldAtConstraint(options bson.Raw) bool {
	if options == nil {
		return false
	}
	if level, _ := options.Lookup(levelKey).StringValueOK(); level == string(migration.LevelConstraint) {
		return true
	}
	prepared, _ := options.Lookup(prepareKey).BooleanOK()
	return prepared
}

// AtConstraint reports whether the options show the level constraint.
func AtConstraint(options bson.Raw) bool {
	if options == nil {
		return false
	}
	level, _ := options.Lookup(levelKey).StringValueOK()
	return level == string(migration.LevelConstraint)
}

// StrictForConstraint is a create or collMod document with
// validationLevel constraint sent as strict (constraint comes when the
// window closes, never with a validator); ok reports whether it changed.
func StrictForConstraint(doc bson.D) (out bson.D, ok bool) {
	for i, e := range doc {
		if e.Key == levelKey && e.Value == string(migration.LevelConstraint) {
			out = append(bson.D{}, doc...)
			out[i].Value = string(migration.LevelStrict)
			return out, true
		}
	}
	return doc, false
}
