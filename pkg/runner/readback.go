package runner

// Every validator mongomig sends is read back. A server may accept a
// create or collMod with a validator and keep something else: stock
// FerretDB 2 (v2.5 to v2.7) drops every option of create, so the
// collection has no validator at all. After each create or collMod that
// sets validator options, listCollections shows what the server holds;
// when it is not what was sent, a create is followed by a collMod with the
// same options (read back too), and a validator still not held is
// reported client-side only, never as enforced. status reads the same
// options for its enforcement column.
//
// MongoDB keeps the options as sent: CollectionOptions::parse stores the
// validator document as given and appendBSON lists it, and lists
// validationLevel and validationAction only when they were set (an empty
// validator is not listed): src/mongo/db/catalog/collection_options.cpp.

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Enforcement of a collection's validator in [CollectionStatus].
const (
	EnforcementServer     = "server"
	EnforcementClientSide = "client-side only"
	EnforcementNone       = "none"
	// EnforcementAbsent: the ledger says the server enforces the
	// validator, but listCollections shows none (or no collection).
	EnforcementAbsent = "absent from the server"
	// EnforcementDiffers: the server holds another validator than the
	// applied migrations declare.
	EnforcementDiffers = "differs on the server"
)

// heldOptions is what listCollections shows of a collection's validator
// options.
type heldOptions struct {
	exists    bool
	validator bson.Raw // nil: none
	level     string
	action    string
}

// heldAll reads the validator options of every collection of the database
// with one listCollections.
func (r *Runner) heldAll(ctx context.Context) (map[string]heldOptions, error) {
	return r.heldFilter(ctx, bson.D{})
}

// held reads coll's validator options.
func (r *Runner) held(ctx context.Context, coll string) (heldOptions, error) {
	all, err := r.heldFilter(ctx, bson.D{{Key: "name", Value: coll}})
	if err != nil {
		return heldOptions{}, err
	}
	return all[coll], nil
}

func (r *Runner) heldFilter(ctx context.Context, filter bson.D) (map[string]heldOptions, error) {
	specs, err := r.db.ListCollectionSpecifications(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("read back validators (listCollections): %w", err)
	}
	out := make(map[string]heldOptions, len(specs))
	for _, s := range specs {
		h := heldOptions{exists: true}
		if v, ok := s.Options.Lookup("validator").DocumentOK(); ok && len(v) > 5 {
			h.validator = v
		}
		h.level, _ = s.Options.Lookup("validationLevel").StringValueOK()
		h.action, _ = s.Options.Lookup("validationAction").StringValueOK()
		out[s.Name] = h
	}
	return out, nil
}

// readBackDiff says how h differs from the validator options c sent: ""
// when every option c sets is held as sent (options c does not set are not
// looked at: MongoDB keeps the previous ones, or lists none).
func readBackDiff(c Command, h heldOptions) string {
	if !h.exists {
		return "listCollections shows no collection " + c.Collection
	}
	var diffs []string
	for _, e := range c.Doc[1:] {
		switch e.Key {
		case "validator":
			want, err := bson.Marshal(e.Value)
			if err != nil {
				return err.Error()
			}
			empty := len(want) <= 5
			switch {
			case empty && h.validator == nil:
			case h.validator == nil:
				diffs = append(diffs, "listCollections shows no validator")
			case empty:
				diffs = append(diffs, "listCollections shows the validator "+h.validator.String()+" where none was sent")
			case !bytes.Equal(want, h.validator):
				diffs = append(diffs, "listCollections shows another validator: "+h.validator.String())
			}
		case "validationLevel", "validationAction":
			got := h.level
			if e.Key == "validationAction" {
				got = h.action
			}
			if want, _ := e.Value.(string); got != want {
				diffs = append(diffs, fmt.Sprintf("listCollections shows %s %q, not %q", e.Key, got, want))
			}
		}
	}
	return strings.Join(diffs, "; ")
}

// setsValidatorOptions reports whether c is a create or collMod that sets
// a validator, validationLevel or validationAction.
func setsValidatorOptions(c Command) bool {
	if c.Name != "create" && c.Name != "collMod" {
		return false
	}
	for _, e := range c.Doc[1:] {
		switch e.Key {
		case "validator", "validationLevel", "validationAction":
			return true
		}
	}
	return false
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
	diff := readBackDiff(c, h)
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
		} else if d := readBackDiff(mod, h); d != "" {
			what += "; after collMod with the same options " + d
		} else {
			return CommandResult{Command: mod, Outcome: OutcomeOK,
				Note: what + " (the server dropped create's options); collMod set them, read back as sent"}, nil
		}
	}
	return CommandResult{Command: c, Outcome: OutcomeClientSide,
		Note: what + ": the server does not enforce this validator; it is enforced client-side only"}, nil
}

// serverEnforcement sets cs's enforcement, level and action from what the
// server holds (h), for a collection the ledger says the server enforces;
// expected are the validators the applied migrations may have left on it
// (the open window, or the plain schema once it closed).
func serverEnforcement(cs *CollectionStatus, h heldOptions, expected ...bson.D) {
	switch {
	case !h.exists:
		cs.Enforcement, cs.EnforcementNote = EnforcementAbsent, "listCollections shows no collection "+cs.Name
		return
	case h.validator == nil:
		cs.Enforcement, cs.EnforcementNote = EnforcementAbsent, "listCollections shows no validator: the server does not enforce the one the ledger records as sent"
		return
	}
	match := false
	for _, v := range expected {
		if b, err := bson.Marshal(v); err == nil && v != nil && bytes.Equal(b, h.validator) {
			match = true
		}
	}
	if !match {
		cs.Enforcement = EnforcementDiffers
		cs.EnforcementNote = "the server holds another validator than the applied migrations declare: " + h.validator.String()
	}
	// MongoDB's defaults when the server lists none.
	level, action := bsonx.OrDefault(h.level, "strict"), bsonx.OrDefault(h.action, "error")
	if level != cs.Level || action != cs.Action {
		cs.EnforcementNote = strings.TrimPrefix(cs.EnforcementNote+fmt.Sprintf("; the files declare (%s, %s)", cs.Level, cs.Action), "; ")
		cs.Level, cs.Action = level, action
	}
}
