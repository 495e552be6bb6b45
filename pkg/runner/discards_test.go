package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestUpRefusesUnsetComments: up refuses the pending migrations when one
// discards stored data the file does not account for, before applying any
// (migration 1 stays pending too); with discard: true it applies them, and
// down of migration 2 names the comments as lost.
func TestUpRefusesUnsetComments(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	_, err := fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(false)).Up(ctx)
	var inv *runner.InvalidFilesError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "0002_comments_collection.yaml:5:17: posts: unset comments") {
		t.Fatalf("up: %v", err)
	}
	if v := fixtures.LedgerVersions(t, db); len(v) != 0 {
		t.Fatalf("applied %v after the refusal, want nothing", v)
	}
	r := fixtures.NewRunner(t, db, fixtures.BlogUnsetFS(true))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	reverted, err := r.Down(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reverted) != 1 || len(reverted[0].Unrestorable) != 1 || reverted[0].Unrestorable[0].Path != "comments" {
		t.Errorf("reverted %+v, want migration 2 with comments unrestorable", reverted)
	}
}
