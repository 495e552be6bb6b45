package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// Runner applies the migrations of one directory to one database.
type Runner struct {
	db         *mongo.Database
	cfg        config
	migrations []*migration.Migration
	registry   *version.Registry
	state      *state.Store
	ledger     *ledger.Store
	window     *window.Set
	// the server's answers, probed once when first needed (memo.go)
	caps       *memo[probe.Capabilities]
	lifecycle  *memo[probe.LifecycleSupport]
	validation *memo[probe.ValidationSettings]
	// hook, set only by tests (export_test.go), runs at points of a run so
	// a test process can kill itself there.
	hook func(point string, version int64, i int)
}

// New loads and checks the migrations in fsys and returns a runner for db.
// It fails when any file is invalid with an [*InvalidFilesError], whose
// Report has every problem at file:line:column; nothing is applied from a
// directory that does not lint. An unreadable directory is the file
// system's error. A migration that
// declares no collection is only a lint warning (status, down and backfill
// work while it is written); Up and Plan refuse it while it is pending.
func New(db *mongo.Database, fsys fs.FS, opts ...Option) (*Runner, error) {
	if db == nil {
		return nil, errors.New("runner: nil database")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o.apply(&cfg); err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	// Nothing is applied from a directory that does not lint: the same
	// checks, the same messages.
	report, ms, err := lint.Load(fsys, cfg.versionOpts...)
	if err != nil {
		return nil, err
	}
	if !report.OK() {
		return nil, &InvalidFilesError{Report: report}
	}
	reg, err := version.FromMigrations(ms, append([]version.Option{version.AllowMissingFuncs(true)}, cfg.versionOpts...)...)
	if err != nil {
		return nil, err
	}
	// The registry's field is the one source of truth: the window,
	// backfill, down and status filter on the field the application stamps.
	if reg.Field() != cfg.versionField {
		if cfg.versionFieldSet {
			return nil, fmt.Errorf("runner: WithVersionField(%q) conflicts with version.WithField(%q) given through WithVersionOptions: name the version field once", cfg.versionField, reg.Field())
		}
		cfg.versionField = reg.Field()
	}
	return &Runner{db: db, cfg: cfg, migrations: ms, registry: reg, state: state.New(db), ledger: ledger.New(db, cfg.ledger), window: window.New(ms, reg),
		caps: newMemo(cfg.caps), lifecycle: newMemo(cfg.lifecycle), validation: newMemo(cfg.validation)}, nil
}

// InvalidFilesError is returned by [New] for a migration directory with
// lint errors; Report has every problem with its position.
type InvalidFilesError struct {
	Report *lint.Report
}

func (e *InvalidFilesError) Error() string {
	var lines []string
	for _, p := range e.Report.Problems {
		if p.Severity != lint.SeverityError {
			continue
		}
		l := p.Location() + ": " + p.Message
		if p.Hint != "" {
			l += "; " + p.Hint
		}
		lines = append(lines, l)
	}
	return fmt.Sprintf("invalid migration files (%d error%s; nothing was applied):\n%s", e.Report.Errors, map[bool]string{true: "s"}[e.Report.Errors != 1], strings.Join(lines, "\n"))
}

// Migrations are the loaded migrations in version order (a copy of the
// list; the migrations are shared and must not be modified).
func (r *Runner) Migrations() []*migration.Migration { return slices.Clone(r.migrations) }

// Database is the database the runner migrates.
func (r *Runner) Database() *mongo.Database { return r.db }

// AppliedVersion is the highest migration version the ledger records (0:
// none).
func (r *Runner) AppliedVersion(ctx context.Context) (int64, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return 0, err
	}
	return maxApplied(ledger), nil
}

// LeaseDuration is how long the runner's leases live without a heartbeat.
func (r *Runner) LeaseDuration() time.Duration { return r.cfg.lease }

// LockWait is how long the runner waits for a lease another process holds.
func (r *Runner) LockWait() time.Duration { return r.cfg.wait }

// Logger is where the runner's entries go (see [WithLogger]).
func (r *Runner) Logger() events.Logger { return r.cfg.log }

// Registry is the version registry built from the same files.
func (r *Runner) Registry() *version.Registry { return r.registry }

// The ledger and its marks log are internal/ledger's (its doc comment
// states their invariants); the runner decides when a migration is
// recorded or forgotten, under the migration lock.
type (
	// LedgerEntry is the ledger's record of one applied migration.
	LedgerEntry = ledger.Entry
	// AppliedBy identifies who applied a migration.
	AppliedBy = ledger.AppliedBy
)

// readLedger returns the applied migrations by version.
func (r *Runner) readLedger(ctx context.Context) (map[int64]LedgerEntry, error) {
	return r.ledger.Read(ctx)
}

func (r *Runner) record(ctx context.Context, m *migration.Migration, took time.Duration, clientSide []string) error {
	who := ledger.Who(r.cfg.owner)
	e := LedgerEntry{
		Version: m.Version, Name: m.Name, File: m.File, Checksum: m.Checksum, SchemaChecksum: migration.SchemaChecksum(m),
		AppliedAt: ledger.Now(ctx, r.db), DurationMS: took.Milliseconds(),
		AppliedBy: who, ToolVersion: r.cfg.toolVersion, ClientSideValidators: clientSide,
	}
	return r.ledger.Record(ctx, e)
}

func (r *Runner) forget(ctx context.Context, v int64) error { return r.ledger.Forget(ctx, v) }

var maxApplied = ledger.MaxApplied
