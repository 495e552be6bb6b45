package probe

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ValidationSettings are the validation settings of MongoDB 8.1 and 9.0,
// each tried on a collection of a scratch database.
type ValidationSettings struct {
	// ErrorAndLog: collMod validationAction errorAndLog is accepted and
	// listCollections shows it (MongoDB 8.1).
	ErrorAndLog Capability `json:"errorAndLog"`
	// Constraint: validationLevel constraint is accepted on a strict
	// collection after prepareConstraintValidationLevel: true, and
	// listCollections shows it (MongoDB 9.0; the order is MongoDB's
	// checkValidationOptionsCanBeUsed,
	// src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp).
	Constraint Capability `json:"constraint"`
}

// ProbeValidationSettings tries errorAndLog and constraint in a scratch
// database named mongomig_probe_<random> on db's client, dropped before
// it returns. A refusal is a capability's Reason; network failures and
// timeouts are errors.
func ProbeValidationSettings(ctx context.Context, db *mongo.Database) (*ValidationSettings, error) {
	scratch := db.Client().Database(scratchName())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = scratch.Drop(dctx)
	}()
	create := bson.D{{Key: "create", Value: scratchCollection}, {Key: "validator", Value: ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "strict"}, {Key: "validationAction", Value: "error"}}
	if c, err := classify(scratch.RunCommand(ctx, create).Err(), "create with a validator"); err != nil || c.Reason != "" {
		return &ValidationSettings{ErrorAndLog: c, Constraint: c}, err
	}
	out := &ValidationSettings{}
	var err error
	if out.ErrorAndLog, err = trySetting(ctx, scratch, "validationAction", "errorAndLog",
		bson.D{{Key: "collMod", Value: scratchCollection}, {Key: "validationAction", Value: "errorAndLog"}}); err != nil {
		return nil, err
	}
	prepare := bson.D{{Key: "collMod", Value: scratchCollection}, {Key: "validationAction", Value: "error"}, {Key: "prepareConstraintValidationLevel", Value: true}}
	if c, err := classify(scratch.RunCommand(ctx, prepare).Err(), "collMod prepareConstraintValidationLevel: true"); err != nil || c.Reason != "" {
		out.Constraint = c
		return out, err
	}
	if out.Constraint, err = trySetting(ctx, scratch, "validationLevel", "constraint",
		bson.D{{Key: "collMod", Value: scratchCollection}, {Key: "validationLevel", Value: "constraint"}}); err != nil {
		return nil, err
	}
	return out, nil
}

// trySetting sends cmd and reads back that key holds value.
func trySetting(ctx context.Context, db *mongo.Database, key, value string, cmd bson.D) (Capability, error) {
	what := "collMod " + key + " " + value
	if c, err := classify(db.RunCommand(ctx, cmd).Err(), what); err != nil || c.Reason != "" {
		return c, err
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: scratchCollection}})
	if c, cerr := classify(err, "listCollections"); cerr != nil || c.Reason != "" {
		return c, cerr
	}
	if len(specs) == 1 {
		if got, _ := specs[0].Options.Lookup(key).StringValueOK(); got == value {
			return Capability{Available: true}, nil
		}
	}
	return Capability{Reason: what + " was accepted but listCollections does not show it: the server ignored it"}, nil
}
