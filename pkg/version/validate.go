package version

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
)

// InvalidError is a document that fails its collection's current
// validator.
type InvalidError struct {
	Collection string
	ID         any
	// From is the migration whose validator the document fails.
	From     int64
	Failures []validator.Failure
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.String()
	}
	return fmt.Sprintf("%s document %s fails the validator of migration %d: %s", e.Collection, idString(e.ID), e.From, strings.Join(parts, "; "))
}

// compiledValidator is a collection's current validator.
type compiledValidator struct {
	from   int64
	schema *validator.Schema
}

// compileValidators compiles the last validator each collection declares.
func compileValidators(ms []*migration.Migration) (map[string]compiledValidator, error) {
	out := map[string]compiledValidator{}
	for _, m := range ms {
		for _, c := range m.Collections {
			if c.Validator == nil {
				continue
			}
			schema, ok := c.JSONSchema()
			if !ok {
				continue
			}
			s, err := validator.Compile(schema)
			if err != nil {
				return nil, fmt.Errorf("%s: validator of %s: %w (%w)", m.File, c.Name, err, ErrInvalidFile)
			}
			out[c.Name] = compiledValidator{from: m.Version, schema: s}
		}
	}
	return out, nil
}

// Validate checks doc against the current validator of coll (the last
// migration that declares one), as the server would on a write. It
// returns nil when the document is valid or coll has no validator, an
// [ErrUnknownCollection] for a collection no migration names (unless
// declared with [WithCollections]), and an [*InvalidError] listing every
// failure otherwise. Use it before writes on
// servers that do not enforce validators (FerretDB, some managed services):
// `mongomig status` says which collections are enforced client-side only.
func (r *Registry) Validate(coll string, doc bson.D) error {
	v, ok := r.validators[coll]
	if !ok {
		return r.checkKnown(coll)
	}
	if fs := v.schema.ValidateD(doc); len(fs) > 0 {
		id, _ := lookupD(doc, "_id")
		return &InvalidError{Collection: coll, ID: id, From: v.from, Failures: fs}
	}
	return nil
}

// ValidateRaw is [Registry.Validate] for raw BSON.
func (r *Registry) ValidateRaw(coll string, doc bson.Raw) error {
	v, ok := r.validators[coll]
	if !ok {
		return r.checkKnown(coll)
	}
	if fs := v.schema.Validate(doc); len(fs) > 0 {
		var id any
		if rv, err := doc.LookupErr("_id"); err == nil {
			id = rv
		}
		return &InvalidError{Collection: coll, ID: id, From: v.from, Failures: fs}
	}
	return nil
}
