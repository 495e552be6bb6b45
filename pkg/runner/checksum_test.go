package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestDocumentaryEditsAreNotDrift: adding a downgrade, an example or a
// description to an applied migration is not drift (down's own refusal
// advises adding a downgrade); changing what up sends is.
func TestDocumentaryEditsAreNotDrift(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := samples(t)
	if _, err := newRunner(t, db, fsys).Up(ctx); err != nil {
		t.Fatal(err)
	}
	const file = "0004_order_currency_and_tags.yaml"
	src := string(fsys[file].Data)
	edited := fstest.MapFS{}
	for k, v := range fsys {
		edited[k] = v
	}
	// A new description, a comment, and a downgrade for orders.
	doc := strings.Replace(src, "description:", "# reviewed\ndescription: (reviewed)", 1)
	doc = strings.Replace(doc, "\n  posts:", "\n    downgrade:\n      - unset: [tags]\n  posts:", 1)
	if doc == src || !strings.Contains(doc, "downgrade:\n      - unset: [tags]") {
		t.Fatalf("the test's edit did not apply:\n%s", doc)
	}
	edited[file] = &fstest.MapFile{Data: []byte(doc)}
	st, err := newRunner(t, db, edited).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Drifted != 0 {
		t.Fatalf("a documentary edit is drift: %+v", st.Migrations)
	}
	// Changing the validator level is drift.
	edited[file] = &fstest.MapFile{Data: []byte(strings.Replace(doc, "validationLevel: moderate", "validationLevel: strict", 1))}
	if st, err := newRunner(t, db, edited).Status(ctx); err != nil || st.Drifted != 1 {
		t.Fatalf("a changed validationLevel is not drift: %v %+v", err, st)
	}
}

// TestAllowDriftIsRecorded: up --allow-drift records the edited file, so
// the next plain up does not refuse again (docs/cli.md: "use it once").
func TestAllowDriftIsRecorded(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := samples(t)
	if _, err := newRunner(t, db, fsys).Up(ctx); err != nil {
		t.Fatal(err)
	}
	const file = "0002_orders_and_blog.yaml"
	fsys[file] = &fstest.MapFile{Data: []byte(strings.Replace(string(fsys[file].Data), "validationAction: warn", "validationAction: error", 1))}
	var drift *runner.DriftError
	if _, err := newRunner(t, db, fsys).Up(ctx); !errors.As(err, &drift) {
		t.Fatalf("edited file: %v, want drift", err)
	}
	if _, err := newRunner(t, db, fsys, runner.WithAllowDrift(true)).Up(ctx); err != nil {
		t.Fatalf("--allow-drift: %v", err)
	}
	if _, err := newRunner(t, db, fsys).Up(ctx); err != nil {
		t.Fatalf("plain up after --allow-drift: %v", err)
	}
}

// TestStatusWithoutCountsScansNothing: a deploy's status (and up/down's
// summary) reads the ledger, checkpoints and leases; only --counts runs
// the $group over each migrated collection.
func TestStatusWithoutCountsScansNothing(t *testing.T) {
	ctx := context.Background()
	_, rec, r := sampleApplied(t)
	before := len(rec.Named("aggregate"))
	st, err := r.StatusOf(ctx, runner.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Named("aggregate")) - before; n != 0 || len(st.Collections) != 4 || st.Collections[0].Documents != nil {
		t.Fatalf("status without counts ran %d aggregates; collections %+v", n, st.Collections)
	}
	if _, err := r.StatusOf(ctx, runner.StatusOptions{Counts: true}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Named("aggregate")) - before; n != 4 {
		t.Errorf("status --counts ran %d aggregates, want one per collection", n)
	}
}

// TestBackfillRefusesMissingFuncBeforeReading: the stock binary facing a
// `func:` step it does not have refuses before reading any document,
// naming the function and how to build a binary that has it.
func TestBackfillRefusesMissingFuncBeforeReading(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	fsys := fstest.MapFS{"0001_names.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - func: splitName\n")}}
	r := newRunner(t, db, fsys)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	before := len(rec.Named("find"))
	_, err := backfill.Run(ctx, r, backfill.Options{})
	// The error carries the step; the command line words the way out
	// (cmd/mongomig's funcrefused script test).
	var fe *version.FuncMissingError
	if !errors.Is(err, runner.ErrFuncMissing) || !errors.As(err, &fe) || fe.Func != "splitName" || fe.Collection != "users" || fe.File != "0001_names.yaml" || !strings.Contains(err.Error(), "func: splitName") {
		t.Fatalf("Backfill = %v, want a FuncMissingError naming splitName", err)
	}
	for _, c := range rec.Named("find")[before:] {
		if c.Lookup("find").StringValue() == "users" {
			t.Errorf("the refused backfill read users: %s", c)
		}
	}
}
