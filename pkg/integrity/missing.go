package integrity

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// MissingCollectionError is a repair refused before it wrote anything: a
// rule that writes what it finds reads a collection the database does not
// have (a misspelt `to:` or `from:`, or a collection not created yet).
// Every value it checks would look out of line: each reference dangling
// (deleted or unset by its onDangling), each aggregate 0 or absent, each
// mirror copy removed.
type MissingCollectionError struct {
	Database string
	Missing  []MissingCollection
}

// MissingCollection is one rule and the collection it reads that is not
// there.
type MissingCollection struct {
	// File is the migration file declaring the rule, with its line and
	// column when known (file:line:column).
	Rule, File, Collection string
	// Would is what the repair would have done to every value.
	Would string
}

func (e *MissingCollectionError) Error() string {
	var parts []string
	for _, m := range e.Missing {
		parts = append(parts, fmt.Sprintf("rule %s (%s) reads collection %s, which database %s does not have: repair would %s", m.Rule, m.File, m.Collection, e.Database, m.Would))
	}
	return strings.Join(parts, "; ") + "; nothing was written: check the collection's name in the rule, or create the collection if it is meant to be empty"
}

// refuseMissing returns a *MissingCollectionError when a rule that
// writes reads a collection the database does not have (one
// listCollections).
func (c *Checker) refuseMissing(ctx context.Context) error {
	names, err := c.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("list the collections the rules read: %w", err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	e := &MissingCollectionError{Database: c.db.Name()}
	for _, r := range c.rules {
		would, at := destroys(r)
		if would == "" {
			continue
		}
		for _, coll := range c.reads(r) {
			if !have[coll] {
				in := r.info()
				file := in.File
				if at.IsValid() {
					file = fmt.Sprintf("%s:%d:%d", file, at.Line, at.Column)
				}
				e.Missing = append(e.Missing, MissingCollection{Rule: in.Rule, File: file, Collection: coll, Would: would})
			}
		}
	}
	if len(e.Missing) == 0 {
		return nil
	}
	return e
}

// destroys is what repairing r against a missing collection would do to
// every value ("": nothing, r only reports), and where r is declared.
func destroys(r rule) (string, migration.Pos) {
	switch r := r.(type) {
	case *refRule:
		switch r.ref.OnDangling {
		case migration.DanglingDelete:
			return "delete every document of " + r.info().Collection + " holding a reference", r.ref.Pos
		case migration.DanglingUnset:
			return "remove every reference of " + r.info().Collection, r.ref.Pos
		}
	case *aggRule:
		return "set every " + r.agg.Field + " of " + r.info().Collection + " as if it had no children", r.agg.Pos
	case *copyRule:
		if r.cp.Mode == migration.CopyMirror {
			return "remove every copy of " + r.info().Collection, r.cp.Pos
		}
	}
	return "", migration.Pos{}
}
