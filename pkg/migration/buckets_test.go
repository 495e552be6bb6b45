package migration_test

import (
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/buckets"
	"github.com/mongomig/mongomig/pkg/migration"
)

const eventsFamily = `buckets:
  "events_{yyyy}_{mm}":
    period: month
    ahead: 2
    keep: 6
    validator:
      $jsonSchema: {bsonType: object, required: [at]}
    validationAction: errorAndLog
    indexes:
      create:
        - keys: {at: 1}
`

func TestParseBucketFamily(t *testing.T) {
	m, err := migration.Parse("0001_events.yaml", []byte(eventsFamily))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Buckets) != 1 {
		t.Fatalf("buckets = %+v", m.Buckets)
	}
	b := m.Buckets[0]
	if b.Pattern != "events_{yyyy}_{mm}" || b.Period != buckets.Month || *b.Ahead != 2 || *b.Keep != 6 ||
		b.ValidationAction != migration.ActionErrorAndLog || len(b.Indexes.Create) != 1 || b.Indexes.Create[0].Name != "at_1" {
		t.Errorf("family = %+v", b)
	}
	// A file with a family changes the schema checksum; one without keeps
	// the checksum it had before buckets: existed.
	plain, _ := migration.Parse("0001_events.yaml", []byte("collections:\n  a: {validationLevel: moderate}\n"))
	both, _ := migration.Parse("0001_events.yaml", []byte("collections:\n  a: {validationLevel: moderate}\n"+eventsFamily))
	if migration.SchemaChecksum(plain) == migration.SchemaChecksum(both) {
		t.Error("the family is not covered by the schema checksum")
	}
	later, _ := migration.Parse("0002_events.yaml", []byte("buckets:\n  \"events_{yyyy}_{mm}\": {keep: 3, indexes: {drop: [at_1]}}\n"))
	fs := migration.Families([]*migration.Migration{m, later}, func(int64) bool { return true })
	if len(fs) != 1 || fs[0].Keep != 3 || fs[0].Ahead != 2 || len(fs[0].Indexes) != 0 || fs[0].Dropped["at_1"] != 2 || fs[0].From != 1 {
		t.Errorf("folded = %+v", fs)
	}
}

func TestParseBucketFamilyErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"buckets:\n  \"events_{yyyy}\": {period: month}\n", `0001_a.yaml:2:3: bucket family: pattern "events_{yyyy}" lacks {mm}`},
		{"buckets:\n  \"events_{yyyy}_{mm}\": {period: quarter}\n", `0001_a.yaml:2:34: invalid period "quarter"`},
		{"buckets:\n  \"events_{yyyy}_{mm}\": {ahead: 5000}\n", "invalid ahead \"5000\"; write a whole number from 0 to 366"},
		{"buckets:\n  \"events_{yyyy}_{mm}\": {upgrade: [{unset: [a]}]}\n", `unknown key "upgrade"`},
		{"buckets:\n  \"$events_{yyyy}_{mm}\": {ahead: 1}\n", "it contains '$'"},
		{"collections:\n  a: {validationLevel: constrained}\n", "or constraint where the server has it (MongoDB 9.0)"},
	} {
		_, err := migration.Parse("0001_a.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
