package window

import (
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestBranchesCheckTheirOwnVersion: each document version is checked
// against the schema in force while it was current (invariant 1); the
// version before the first validator passes unchecked, and the plain
// schema is the current version's.
func TestBranchesCheckTheirOwnVersion(t *testing.T) {
	ms, err := migration.Load(fstest.MapFS{
		"0001_a.yaml": {Data: []byte("collections:\n  users:\n    validator:\n      $jsonSchema: {required: [name]}\n")},
		"0002_b.yaml": {Data: []byte("collections:\n  users:\n    validator:\n      $jsonSchema: {required: [first]}\n    upgrade:\n      - default: {first: x}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := ms[0].Collections[0].Validator, ms[1].Collections[0].Validator
	reg, err := version.FromMigrations(ms, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	s := New(ms, reg)
	if got := s.Branches("users", 2); len(got) != 2 || got[0].Version != 0 || got[0].From != 1 || got[1].Version != 2 || got[1].From != 2 {
		t.Fatalf("branches %+v; want v0 from 0001, v2 from 0002", got)
	}
	want := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "$and", Value: bson.A{reg.VersionIs(2), s2}}},
		bson.D{{Key: "$and", Value: bson.A{reg.VersionIs(0), s1}}},
	}}}
	if got := s.At("users", 2); !equal(t, got, want) {
		t.Errorf("window at 2:\n got %v\nwant %v", got, want)
	}
	if got := s.Plain("users", 2); !equal(t, got, s2) {
		t.Errorf("plain at 2: %v; want %v", got, s2)
	}
	if got := s.At("users", 1); !equal(t, got, s1) {
		t.Errorf("at 1 (no version yet): %v; want the plain schema %v", got, s1)
	}
	if s.DocVersionAt("users", 1) != 0 || s.DocVersionAt("users", 2) != 2 {
		t.Errorf("document versions %d, %d; want 0, 2", s.DocVersionAt("users", 1), s.DocVersionAt("users", 2))
	}
}

func equal(t *testing.T, a, b bson.D) bool {
	t.Helper()
	x, err := bson.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := bson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
