package migration_test

import (
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestParseAcceptsWhatMongoDBAccepts holds step forms MongoDB's update
// operators accept and mongomig once refused when it loaded the file.
// Each case cites the MongoDB source that
// decides it.
func TestParseAcceptsWhatMongoDBAccepts(t *testing.T) {
	cases := []struct {
		name, step string
		fields     int
	}{
		// Item 5: $-prefixed names below the top level are ordinary fields
		// since MongoDB 5.0 (SERVER-49117; jstests/core/updateh.js:
		// {$set: {"sneaky.$x": 1}} and {$set: {"secret.agent$.$x": 1}} work;
		// field_checker.cpp refuses only empty, `$` and `$[...]` segments).
		{"set nested $ field", `set: {sneaky.$x: 1}`, 1},
		{"set deeper $ field", `set: {secret.agent$.$x: 1}`, 1},
		{"rename from a nested $ field", `rename: {a.$old: a.new}`, 1},
		{"unset a nested $ field", `unset: [a.$x]`, 1},
		{"$ inside a segment", `set: {ke$sha: 1}`, 1},
		// Item 6: an empty operand is a no-op update: MongoDB 5.0+ accepts
		// {$set: {}} and {$unset: {}} (src/mongo/db/update/update_driver.cpp,
		// parseUpdateExpression: an empty modifier object adds no node; the
		// "'$set' is empty. You must specify a field" check of 4.4 is gone).
		{"empty set", `set: {}`, 0},
		{"empty default", `default: {}`, 0},
		{"empty rename", `rename: {}`, 0},
		{"empty copy", `copy: {}`, 0},
		{"empty unset list", `unset: []`, 0},
		{"empty unset mapping", `unset: {}`, 0},
		// Item 8: _id may be set; MongoDB refuses only a document whose _id
		// would change (modifier_node.cpp, checkImmutablePathsNotModified*),
		// so the check is per document, in pkg/version.
		{"set _id", `set: {_id: 1}`, 1},
		{"set a field of _id", `set: {_id.region: eu}`, 1},
		{"default _id", `default: {_id: 1}`, 1},
		{"copy from _id", `copy: {_id: legacyId}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "collections:\n  users:\n    upgrade:\n      - " + tc.step + "\n"
			m, err := migration.Parse("0001_a.yaml", []byte(src))
			if err != nil {
				t.Fatalf("%s refused: %v", tc.step, err)
			}
			steps := m.Collections[0].Upgrade
			if len(steps) != 1 || len(steps[0].Fields) != tc.fields {
				t.Fatalf("%s parsed as %+v, want one step with %d fields", tc.step, steps, tc.fields)
			}
		})
	}
}
