package migration_test

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestParseLifecycle reads options, index changes, rebuilds and views,
// and what each sends.
func TestParseLifecycle(t *testing.T) {
	m, err := migration.Parse("0001_life.yaml", []byte(`collections:
  log:
    options:
      capped: {size: 1000, max: 10}
  sessions:
    indexes:
      change:
        - {name: lastSeen_1, expireAfterSeconds: 60, hidden: false}
      rebuild:
        - {keys: {email: 1}, unique: true}
views:
  active: {viewOn: sessions, pipeline: [{$match: {active: true}}]}
  gone: {drop: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := bsonString(m.Collection("log").Options.Command()); got != `{"capped":true,"size":{"$numberLong":"1000"},"max":{"$numberLong":"10"}}` {
		t.Errorf("capped create fields = %s", got)
	}
	// MongoDB stores the size rounded up to 256 (collection_options.cpp, adjustCappedSize).
	if migration.CappedSize(1000) != 1024 || migration.CappedSize(1024) != 1024 {
		t.Errorf("CappedSize(1000) = %d", migration.CappedSize(1000))
	}
	s := m.Collection("sessions")
	if got := bsonString(s.Indexes.Change[0].Spec()); got != `{"name":"lastSeen_1","expireAfterSeconds":{"$numberLong":"60"},"hidden":false}` {
		t.Errorf("change = %s", got)
	}
	if len(s.Indexes.Rebuild) != 1 || s.Indexes.Rebuild[0].Name != "email_1" {
		t.Errorf("rebuild = %+v", s.Indexes.Rebuild)
	}
	if v := m.View("active"); v == nil || v.ViewOn != "sessions" || len(v.Pipeline) != 1 || !m.View("gone").Drop {
		t.Errorf("views = %+v", m.Views)
	}
}

// TestParseLifecycleErrors: what MongoDB refuses (collection_options.cpp:
// a capped size; coll_mod.cpp: an index change needs expireAfterSeconds or
// hidden) and what cannot mean anything, each at its line.
func TestParseLifecycleErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"collections:\n  log:\n    options:\n      capped: {max: 10}\n", "4:15: capped has no size"},
		{"collections:\n  log:\n    options:\n      capped: {size: 0}\n", "4:22: invalid capped size"},
		{"collections:\n  m:\n    options:\n      capped: {size: 4096}\n      timeseries: {timeField: at}\n", "4:7: a time-series collection cannot be capped"},
		{"collections:\n  m:\n    options:\n      expireAfterSeconds: 60\n", "options.expireAfterSeconds needs a time-series or clustered collection"},
		{"collections:\n  m:\n    options:\n      timeseries: {timeField: at, granularity: days}\n", "invalid timeseries granularity \"days\""},
		{"collections:\n  s:\n    indexes:\n      change:\n        - {name: a_1}\n", "index change \"a_1\" changes nothing"},
		{"collections:\n  s:\n    indexes:\n      create:\n        - {keys: {a: 1}}\n      change:\n        - {name: a_1, hidden: true}\n", "index \"a_1\" is both created and changed"},
		{"views:\n  v: {viewOn: s, drop: true}\n", "view \"v\" is both dropped and defined"},
		{"views:\n  v: {viewOn: s, pipeline: [{match: {}}]}\n", "a pipeline stage is a mapping with one $-key"},
		{"views:\n  v: {pipeline: []}\n", "view \"v\" has no viewOn"},
	} {
		_, err := migration.Parse("0001_x.yaml", []byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

func bsonString(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, true, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
