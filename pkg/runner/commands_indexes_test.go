package runner_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestUpgradeWithoutValidatorCreatesItsIndexes: a migration that declares
// an upgrade and indexes but no validator (there is none to put in force)
// still creates and drops its indexes. The planner used to leave the
// collection at "no validator: nothing to send" before reaching its
// indexes, so `up` recorded the migration with no index built.
func TestUpgradeWithoutValidatorCreatesItsIndexes(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := fstest.MapFS{
		"0001_people.yaml": {Data: []byte("collections:\n  people:\n    indexes:\n      create:\n        - {keys: {name: 1}}\n")},
		"0002_handle.yaml": {Data: []byte(`collections:
  people:
    upgrade:
      - default: {handle: none}
    indexes:
      drop:
        - name_1
      create:
        - {keys: {handle: 1}}
`)},
	}
	r := newRunner(t, db, fsys)
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Migrations {
		for _, c := range m.Commands {
			got = append(got, c.Name+":"+c.Index)
		}
	}
	if want := "createIndexes:name_1 dropIndexes:name_1 createIndexes:handle_1"; joinSpace(got) != want {
		t.Fatalf("planned %q, want %q", joinSpace(got), want)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := db.Collection("people").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if joinSpace(names) != "_id_ handle_1" {
		t.Fatalf("people's indexes after up = %v, want [_id_ handle_1]", names)
	}
}

func joinSpace(s []string) string { return strings.Join(s, " ") }
