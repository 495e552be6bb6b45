package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/runner"
)

// emptyFS holds a real migration and, after it, one as `mongomig create`
// writes it (the template's comments left out): it declares nothing.
var emptyFS = fstest.MapFS{
	"0001_users.yaml":           {Data: []byte("collections:\n  users:\n    indexes: {create: [{keys: {email: 1}}]}\n")},
	"0002_add_user_status.yaml": {Data: []byte("description: TODO say what this migration changes and why.\n\ncollections: {}\n")},
}

// TestEmptyMigrationIsRefused: the untouched template is a lint warning at
// its collections line (lint cannot tell it from an empty migration an
// earlier mongomig applied, whose file may no longer change); up, its plan and its dry-run report refuse it
// before anything is applied or recorded, naming the file and what to do;
// status and up to the migration before it still work.
func TestEmptyMigrationIsRefused(t *testing.T) {
	ctx := context.Background()
	rep, err := lint.Lint(emptyFS)
	if err != nil {
		t.Fatal(err)
	}
	// The template's description is a warning too: it may be corrected
	// after the migration is applied.
	if rep.Errors != 0 || rep.Warnings != 2 || len(rep.Problems) != 2 ||
		rep.Problems[0].Location() != "0002_add_user_status.yaml:1:1" || rep.Problems[0].Severity != lint.SeverityWarning ||
		!strings.Contains(rep.Problems[0].Message, "template's placeholder") ||
		rep.Problems[1].Location() != "0002_add_user_status.yaml:3:1" || rep.Problems[1].Severity != lint.SeverityWarning ||
		!strings.Contains(rep.Problems[1].Message, "declares no collection") || !strings.Contains(rep.Problems[1].Hint, "fill in collections") {
		t.Fatalf("lint: %d errors, %d warnings, %+v; want warnings at 1:1 (description) and 3:1 (collections)", rep.Errors, rep.Warnings, rep.Problems)
	}

	db := sandboxtest.Database(t, "app")
	r, err := runner.New(db, emptyFS)
	if err != nil {
		t.Fatalf("New refused the directory: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		var invalid *runner.InvalidFilesError
		if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "0002_add_user_status.yaml:3:1: migration declares no collection") ||
			!strings.Contains(err.Error(), "nothing was applied") {
			t.Errorf("%s: %v; want an InvalidFilesError naming 0002_add_user_status.yaml:3:1", what, err)
		}
	}
	_, err = r.Plan(ctx, runner.Latest)
	check("Plan", err)
	_, err = r.Pending(ctx, runner.Latest) // what the dry-run report checks
	check("Pending", err)
	applied, err := r.Up(ctx)
	check("Up", err)
	if len(applied.Applied) != 0 {
		t.Errorf("Up applied %+v", applied)
	}
	st, err := r.Status(ctx)
	if err != nil || st.Current != 0 || st.Pending != 2 {
		t.Fatalf("status after the refused up: %+v %v; want version 0, 2 pending", st, err)
	}
	if applied, err := r.UpTo(ctx, 1); err != nil || len(applied.Applied) != 1 {
		t.Fatalf("up --to 1: %+v %v", applied, err)
	}
}
