package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Runner applies the migrations of one directory to one database.
type Runner struct {
	db         *mongo.Database
	cfg        config
	migrations []*migration.Migration
	registry   *version.Registry
	state      *state.Store
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
	return &Runner{db: db, cfg: cfg, migrations: ms, registry: reg, state: state.New(db)}, nil
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

// LedgerEntry is the ledger's record of one applied migration.
type LedgerEntry struct {
	Version  int64  `bson:"_id" json:"version"`
	Name     string `bson:"name" json:"name"`
	File     string `bson:"file" json:"file"`
	Checksum string `bson:"checksum" json:"checksum"`
	// SchemaChecksum covers only what up sends and how documents are
	// upgraded (see migration.SchemaChecksum); empty in entries older than it.
	SchemaChecksum string    `bson:"schemaChecksum,omitempty" json:"schemaChecksum,omitempty"`
	AppliedAt      time.Time `bson:"appliedAt" json:"appliedAt"`
	DurationMS     int64     `bson:"durationMs" json:"durationMs"`
	AppliedBy      AppliedBy `bson:"appliedBy" json:"appliedBy"`
	ToolVersion    string    `bson:"toolVersion" json:"toolVersion"`
	// ClientSideValidators lists the collections whose validator the server
	// refused: mongomig enforces them client-side only.
	ClientSideValidators []string `bson:"clientSideValidators,omitempty" json:"clientSideValidators,omitempty"`
	// Marked: recorded by a mark, not by up (see Runner.Mark).
	Marked *Mark `bson:"marked,omitempty" json:"marked,omitempty"`
}

// AppliedBy identifies who applied a migration.
type AppliedBy struct {
	Host  string `bson:"host" json:"host"`
	User  string `bson:"user" json:"user"`
	PID   int    `bson:"pid" json:"pid"`
	Owner string `bson:"owner" json:"owner"`
}

func (r *Runner) ledger() *mongo.Collection {
	// Majority write concern: a recorded migration survives a failover.
	// Servers without replication accept and ignore it.
	return r.db.Collection(r.cfg.ledger, options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// readLedger returns the applied migrations by version.
func (r *Runner) readLedger(ctx context.Context) (map[int64]LedgerEntry, error) {
	cur, err := r.ledger().Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", r.cfg.ledger, err)
	}
	var entries []LedgerEntry
	if err := cur.All(ctx, &entries); err != nil {
		return nil, fmt.Errorf("read ledger %s: %w (was the collection edited by hand?)", r.cfg.ledger, err)
	}
	out := make(map[int64]LedgerEntry, len(entries))
	for _, e := range entries {
		out[e.Version] = e
	}
	return out, nil
}

func (r *Runner) record(ctx context.Context, m *migration.Migration, took time.Duration, clientSide []string) error {
	host, _ := os.Hostname()
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	now, err := serverTime(ctx, r.db)
	if err != nil {
		now = time.Now()
	}
	e := LedgerEntry{
		Version: m.Version, Name: m.Name, File: m.File, Checksum: m.Checksum, SchemaChecksum: migration.SchemaChecksum(m),
		AppliedAt: now, DurationMS: took.Milliseconds(),
		AppliedBy:   AppliedBy{Host: host, User: who, PID: os.Getpid(), Owner: r.cfg.owner},
		ToolVersion: r.cfg.toolVersion, ClientSideValidators: clientSide,
	}
	if err := fencedWrite(ctx, func(ctx context.Context) error {
		_, err := r.ledger().InsertOne(ctx, e)
		return err
	}); err != nil {
		if errors.Is(err, ErrLockLost) {
			return fmt.Errorf("record %s: %w", m.File, err)
		}
		if mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("record %s in the ledger: another process recorded it while this one applied it (the lock was lost?): %w", m.File, err)
		}
		return fmt.Errorf("record %s in the ledger: %w; its changes are applied, so run `mongomig up` again to record it", m.File, err)
	}
	return nil
}

func (r *Runner) forget(ctx context.Context, v int64) error {
	if err := fencedWrite(ctx, func(ctx context.Context) error {
		_, err := r.ledger().DeleteOne(ctx, bson.D{{Key: "_id", Value: v}})
		return err
	}); err != nil {
		return fmt.Errorf("remove migration %d from the ledger: %w", v, err)
	}
	return nil
}
