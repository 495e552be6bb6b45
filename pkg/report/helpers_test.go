package report_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/report"
	"github.com/mongomig/mongomig/pkg/runner"
)

// newReporter reports on db against the migration files of fsys.
func newReporter(t testing.TB, db *mongo.Database, fsys fs.FS) *report.Reporter {
	t.Helper()
	ms, err := migration.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := report.New(db, ms)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// newRunner is the runner of the tests that apply migrations, or read the
// ledger or the status a report is compared with.
func newRunner(t testing.TB, db *mongo.Database, fsys fs.FS) *runner.Runner {
	t.Helper()
	r, err := runner.New(db, fsys, runner.WithLockWait(time.Minute), runner.WithLockLease(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dryRun is the report of `up --dry-run --to to` (runner.Latest: every
// pending migration), put together as the CLI does: the runner lists the
// pending migrations, the reporter checks them.
func dryRun(t testing.TB, db *mongo.Database, fsys fs.FS, to int64, opts report.Options) (*report.Report, error) {
	t.Helper()
	pending, err := newRunner(t, db, fsys).Pending(context.Background(), to)
	if err != nil {
		return nil, err
	}
	return newReporter(t, db, fsys).DryRun(context.Background(), pending, opts)
}

var samples = fixtures.Samples
