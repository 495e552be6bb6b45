package lint

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// discardHint says what to write for a step that discards stored data
// nothing keeps.
const discardHint = "add `discard: true` to the step if the data may go, or keep it first: copy or rename it to another field in an earlier step of the same migration (docs/file-format.md, Discarding stored data)"

// lintDiscards warns about every step of m that discards stored data the
// file does not account for ([migration.Discard.Guarded]), where the file
// alone says it does: an unset, or a set of a field the validator in force
// before m declares an array or a document. (A set of another field
// discards only where a document holds a non-empty array or document
// there: the dry run and the backfill count it on the documents.)
func (r *Report) lintDiscards(ms []*migration.Migration, m *migration.Migration, sev Severity) {
	for _, d := range migration.Discards(m) {
		if p, ok := discardProblem(ms, m, d, sev); ok {
			r.add(p)
		}
	}
}

func discardProblem(ms []*migration.Migration, m *migration.Migration, d migration.Discard, sev Severity) (Problem, bool) {
	if d.Guarded() {
		return Problem{}, false
	}
	what := fmt.Sprintf("unset %s removes the value documents hold there", d.Path)
	if !d.Always() {
		kind, ok := structured(migration.StateBefore(ms, d.Collection, m.Version).Validator, d.Path)
		if !ok {
			return Problem{}, false
		}
		what = fmt.Sprintf("set %s replaces what documents hold there (the validator before migration %d declares it %s)", d.Path, m.Version, kind)
	}
	return Problem{Severity: sev, File: m.File, Line: d.Pos.Line, Column: d.Pos.Column, Collection: d.Collection,
		Message: fmt.Sprintf("%s: %s, and no earlier step of this migration keeps it: stored data would be discarded (up refuses to apply the migration, and backfill to run it)", d.Collection, what),
		Hint:    discardHint}, true
}

// Discarding checks migrations about to be applied for steps that discard
// stored data the file does not account for: each is an error here,
// where [Lint] only warns (it cannot tell a pending file from an applied
// one). Up calls it on the pending migrations before anything is applied:
// once applied, the application's lazy upgrades and the backfill would
// discard the data. all are every migration, for the validators in force.
func Discarding(all, pending []*migration.Migration) *Report {
	r := &Report{Problems: []Problem{}}
	for _, m := range pending {
		r.lintDiscards(all, m, SeverityError)
	}
	return r
}

// structured reports whether the $jsonSchema of validator declares path an
// array or a document, and which ("an array", "a document").
func structured(validator bson.D, path string) (string, bool) {
	node := bson.D(nil)
	for _, e := range validator {
		if e.Key == "$jsonSchema" {
			node, _ = e.Value.(bson.D)
		}
	}
	for _, seg := range strings.Split(path, ".") {
		props, _ := lookup(node, "properties").(bson.D)
		node, _ = lookup(props, seg).(bson.D)
		if node == nil {
			return "", false
		}
	}
	types := []any{lookup(node, "bsonType")}
	if a, ok := types[0].(bson.A); ok {
		types = a
	}
	for _, t := range types {
		switch {
		case t == "array":
			return "an array", true
		case t == "object":
			return "a document", true
		}
	}
	switch {
	case lookup(node, "items") != nil:
		return "an array", true
	case lookup(node, "properties") != nil:
		return "a document", true
	}
	return "", false
}

func lookup(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
