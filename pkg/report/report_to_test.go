package report_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestDryRunReportToUsesValidatorAtTarget: `up --dry-run --to 1` reports
// against the validator in force at 1 (0001's users schema, documents not
// upgraded), not the last file's.
func TestDryRunReportToUsesValidatorAtTarget(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	rep, err := dryRun(t, db, samples(t), 1, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Collections) != 1 || rep.Collections[0].Collection != "users" || rep.Collections[0].ValidatorFrom != 1 {
		t.Fatalf("dry run to 1 reported %+v, want users against 0001's validator", rep.Collections)
	}
	full, err := dryRun(t, db, samples(t), runner.Latest, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range full.Collections {
		if c.Collection == "users" && c.ValidatorFrom != 3 {
			t.Errorf("full dry run checked users against %d, want 3", c.ValidatorFrom)
		}
	}
}
