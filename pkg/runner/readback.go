package runner

// Every validator mongomig sends is read back (internal/serverstate says
// why and how it compares). After each create or collMod that sets
// validator options, listCollections shows what the server holds; when it
// is not what was sent, a create is followed by a collMod with the same
// options (read back too), and a validator still not held is reported
// client-side only, never as enforced. status reads the same options for
// its enforcement column.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Enforcement of a collection's validator in [CollectionStatus].
const (
	EnforcementServer     = serverstate.EnforcementServer
	EnforcementClientSide = serverstate.EnforcementClientSide
	EnforcementNone       = serverstate.EnforcementNone
	// EnforcementAbsent: the ledger says the server enforces the
	// validator, but listCollections shows none (or no collection).
	EnforcementAbsent = serverstate.EnforcementAbsent
	// EnforcementDiffers: the server holds another validator than the
	// applied migrations declare.
	EnforcementDiffers = serverstate.EnforcementDiffers
)

// heldAll reads the validator options of every collection of the database
// with one listCollections.
func (r *Runner) heldAll(ctx context.Context) (map[string]serverstate.Collection, error) {
	return r.heldFilter(ctx, bson.D{})
}

// held reads coll's validator options.
func (r *Runner) held(ctx context.Context, coll string) (serverstate.Collection, error) {
	all, err := r.heldFilter(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil {
		return serverstate.Collection{}, err
	}
	return all[coll], nil
}

func (r *Runner) heldFilter(ctx context.Context, filter bson.D) (map[string]serverstate.Collection, error) {
	out, err := serverstate.Options(ctx, r.db, filter)
	if err != nil {
		return nil, fmt.Errorf("read back validators (listCollections): %w", err)
	}
	return out, nil
}

// readBack checks that the server holds what c, just accepted, sent. When
// it holds something else, a create is followed by a collMod with the
// same options; a validator the server still does not hold is reported
// client-side only (OutcomeClientSide), with what it holds in the note.
func (r *Runner) readBack(ctx context.Context, c Command) (CommandResult, error) {
	if !setsValidatorOptions(c) {
		return CommandResult{Command: c, Outcome: OutcomeOK}, nil
	}
	h, err := r.held(ctx, c.Collection)
	if err != nil {
		return CommandResult{}, err
	}
	diff := serverstate.ReadBackDiff(c.Collection, c.Doc[1:], h)
	if diff == "" {
		return CommandResult{Command: c, Outcome: OutcomeOK}, nil
	}
	what := c.Name + " was accepted but " + diff
	if c.Name == "create" {
		mod := collModCommand(c.Collection, c.Doc[1:])
		if err := r.db.RunCommand(ctx, mod.Doc).Err(); err != nil {
			what += "; collMod with the same options was refused: " + probe.ServerMessage(err)
		} else if h, err = r.held(ctx, c.Collection); err != nil {
			return CommandResult{}, err
		} else if d := serverstate.ReadBackDiff(mod.Collection, mod.Doc[1:], h); d != "" {
			what += "; after collMod with the same options " + d
		} else {
			return CommandResult{Command: mod, Outcome: OutcomeOK,
				Note: what + " (the server dropped create's options); collMod set them, read back as sent"}, nil
		}
	}
	return CommandResult{Command: c, Outcome: OutcomeClientSide,
		Note: what + ": the server does not enforce this validator; it is enforced client-side only"}, nil
}
