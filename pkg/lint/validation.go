package lint

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/migration"
)

// lintConstraintAction refuses what the server refuses: validationLevel
// constraint with validationAction warn, whichever of the two a file
// sets, with the other as the earlier files (or MongoDB's defaults,
// strict and error) leave it. MongoDB's checkValidationOptionsCanBeUsed
// (src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp)
// answers BadValue "Validation action of 'warn' is not allowed when
// Validation level is 'constraint'"; errorAndLog is allowed.
func (r *Report) lintConstraintAction(ms []*migration.Migration) {
	type setting struct {
		level  migration.Level
		action migration.Action
	}
	colls, fams := map[string]*setting{}, map[string]*setting{}
	check := func(m *migration.Migration, seen map[string]*setting, name string, level migration.Level, action migration.Action, base, what string) {
		s := seen[name]
		if s == nil {
			s = &setting{level: migration.LevelStrict, action: migration.ActionError}
			seen[name] = s
		}
		if level != "" {
			s.level = level
		}
		if action != "" {
			s.action = action
		}
		if (level != "" || action != "") && s.level == migration.LevelConstraint && s.action == migration.ActionWarn {
			pos := m.Position(base + "/validationLevel") // the key this file sets
			if action != "" {
				pos = m.Position(base + "/validationAction")
			}
			r.add(Problem{Severity: SeverityError, File: m.File, Line: pos.Line, Column: pos.Column, Collection: name,
				Message: fmt.Sprintf("%s %q: validationLevel constraint with validationAction warn, which MongoDB refuses", what, name),
				Hint:    "constraint guarantees every stored document is valid, so invalid writes must fail: use validationAction error or errorAndLog, or another level"})
		}
	}
	for _, m := range ms {
		for _, c := range m.Collections {
			check(m, colls, c.Name, c.ValidationLevel, c.ValidationAction, "/collections/"+escapePointer(c.Name), "collection")
		}
		for _, b := range m.Buckets {
			check(m, fams, b.Pattern, b.ValidationLevel, b.ValidationAction, "/buckets/"+escapePointer(b.Pattern), "bucket family")
		}
	}
}
