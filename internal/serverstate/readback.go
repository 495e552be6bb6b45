// Package serverstate reads what a server holds of a collection's schema
// (its validator options by listCollections, its indexes by listIndexes)
// and compares it with what was sent or declared: the read-back of a
// command that set validator options ([ReadBackDiff]), the enforcement
// status reports ([CheckEnforced]) and the declared state a takeover puts
// back ([Declare], [Compare]). It reads and compares; it sends no command:
// pkg/runner, the only sender of collMod, createIndexes and dropIndexes,
// turns its [Fix]es into commands. It never prints.
//
// Every validator mongomig sends is read back. A server may accept a
// create or collMod with a validator and keep something else: stock
// FerretDB 2 (v2.5 to v2.7) drops every option of create, so the
// collection has no validator at all.
//
// MongoDB keeps the options as sent: CollectionOptions::parse stores the
// validator document as given and appendBSON lists it, and lists
// validationLevel and validationAction only when they were set (an empty
// validator is not listed): src/mongo/db/catalog/collection_options.cpp.
package serverstate

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// Enforcement of a collection's validator (pkg/runner's
// CollectionStatus.Enforcement).
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

// Collection is what listCollections shows of a collection's validator
// options and, when read by [Read], what listIndexes shows of its indexes.
type Collection struct {
	Exists    bool
	Validator bson.Raw // nil: none
	Level     string
	Action    string
	// Indexes (name -> key) and Unique (name -> unique), read by [Read].
	Indexes map[string]bson.D
	Unique  map[string]bool
}

// Options reads the validator options of the collections filter matches
// with one listCollections (the error is the driver's).
func Options(ctx context.Context, db *mongo.Database, filter bson.D) (map[string]Collection, error) {
	specs, err := db.ListCollectionSpecifications(ctx, filter)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Collection, len(specs))
	for _, s := range specs {
		h := Collection{Exists: true}
		if v, ok := s.Options.Lookup("validator").DocumentOK(); ok && len(v) > 5 {
			h.Validator = v
		}
		h.Level, _ = s.Options.Lookup("validationLevel").StringValueOK()
		h.Action, _ = s.Options.Lookup("validationAction").StringValueOK()
		out[s.Name] = h
	}
	return out, nil
}

// ReadBackDiff says how h differs from the validator options sent (the
// fields of a create or collMod of coll, its name left out): "" when
// every option sent is held as sent (options not sent are not looked at:
// MongoDB keeps the previous ones, or lists none).
func ReadBackDiff(coll string, sent bson.D, h Collection) string {
	if !h.Exists {
		return "listCollections shows no collection " + coll
	}
	var diffs []string
	for _, e := range sent {
		switch e.Key {
		case "validator":
			want, err := bson.Marshal(e.Value)
			if err != nil {
				return err.Error()
			}
			empty := len(want) <= 5
			switch {
			case empty && h.Validator == nil:
			case h.Validator == nil:
				diffs = append(diffs, "listCollections shows no validator")
			case empty:
				diffs = append(diffs, "listCollections shows the validator "+h.Validator.String()+" where none was sent")
			case !bytes.Equal(want, h.Validator):
				diffs = append(diffs, "listCollections shows another validator: "+h.Validator.String())
			}
		case "validationLevel", "validationAction":
			got := h.Level
			if e.Key == "validationAction" {
				got = h.Action
			}
			if want, _ := e.Value.(string); got != want {
				diffs = append(diffs, fmt.Sprintf("listCollections shows %s %q, not %q", e.Key, got, want))
			}
		}
	}
	return strings.Join(diffs, "; ")
}

// Enforced is what the server holds of a validator the ledger says it
// enforces: Enforcement (an Enforcement constant) with Note saying what
// it holds, and the level and action in force.
type Enforced struct {
	Enforcement, Note string
	Level, Action     string
}

// CheckEnforced compares h, what the server holds of coll, with a
// validator the ledger says the server enforces at level and action;
// expected are the validators the applied migrations may have left on it
// (the open window, or the plain schema once it closed).
func CheckEnforced(coll string, h Collection, level, action string, expected ...bson.D) Enforced {
	e := Enforced{Enforcement: EnforcementServer, Level: level, Action: action}
	switch {
	case !h.Exists:
		e.Enforcement, e.Note = EnforcementAbsent, "listCollections shows no collection "+coll
		return e
	case h.Validator == nil:
		e.Enforcement, e.Note = EnforcementAbsent, "listCollections shows no validator: the server does not enforce the one the ledger records as sent"
		return e
	}
	match := false
	for _, v := range expected {
		if b, err := bson.Marshal(v); err == nil && v != nil && bytes.Equal(b, h.Validator) {
			match = true
		}
	}
	if !match {
		e.Enforcement = EnforcementDiffers
		e.Note = "the server holds another validator than the applied migrations declare: " + h.Validator.String()
	}
	// MongoDB's defaults when the server lists none.
	heldLevel, heldAction := bsonx.OrDefault(h.Level, "strict"), bsonx.OrDefault(h.Action, "error")
	if heldLevel != level || heldAction != action {
		e.Note = strings.TrimPrefix(e.Note+fmt.Sprintf("; the files declare (%s, %s)", level, action), "; ")
		e.Level, e.Action = heldLevel, heldAction
	}
	return e
}
