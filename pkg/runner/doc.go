// Package runner applies migrations to a MongoDB database and combines the
// lower packages (pkg/migration, pkg/validator, pkg/version) into what the
// command line offers. A team can use it as a library, the way goose is
// used:
//
//	r, err := runner.New(db, migrationsFS, runner.WithVersionOptions(version.WithFunc("splitName", SplitName)))
//	...
//	applied, err := r.Up(ctx)
//
// [New] lints the directory first (a [*InvalidFilesError] holding the
// lint report); [Runner.Up], [Runner.UpTo] ([Latest] for every pending
// migration), [Runner.Down] and [Runner.DownTo] apply or revert validators
// (collMod), indexes and data downgrades under the migration lock,
// recording each migration in the ledger only after all of its commands
// succeeded; [Runner.Plan] and [Runner.PlanDown] say what they would send;
// [Runner.Status] compares the ledger with the files and the server;
// [Runner.Pending] lists what Up would apply; [Runner.Unlock] removes a
// stale lock. The runner decides what the ledger records and which
// validator window is sent (internal/ledger and internal/window own those
// documents and state their invariants) and is the only package that
// sends collMod, createIndexes and dropIndexes. What it sends is planned
// below it: a migration's lifecycle and a bucket family's commands
// (internal/lifecycleplan), the declared state a takeover puts back
// (internal/declared), which validators the server is given
// (internal/enforce); an expired backlog is deleted by internal/expiry.
//
// The other products take what they need from it: a *Runner is the Source
// of package backfill (which upgrades the documents nobody reads), and
// the migrations and registry it loaded feed package report (validation
// reports and the dry run). Package lint checks files without a database,
// package probe reports what a server supports, package inspect writes a
// baseline from an existing database.
//
// Errors are typed: [DriftError], [OrderError], [PartialError] (what was
// done, what failed, what was not done), [InterruptedError] (the context
// was cancelled: stopped between two commands or two batches of a
// downgrade's document writes, lock released), [BackfillRunningError],
// [LockTimeoutError] and [ErrLockLost]. Results are plain data with JSON
// tags; what happens goes to the events.Logger given with [WithLogger]. The
// package never prints.
//
// A *Runner is safe for concurrent use by several goroutines (its state is
// read-only after [New]; the server arbitrates through the migration lock),
// as several runners in several processes are; build it with [New] (the
// zero Runner is not usable).
package runner

import (
	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/gopanic"
)

// Types shared with the other products, defined below them.
type (
	// ExtJSON is a value written as relaxed MongoDB Extended JSON.
	ExtJSON = bsonx.ExtJSON
	// FailureGroup is every document failing one rule at one path.
	FailureGroup = bsonx.FailureGroup
	// PanicError is a panic recovered in a goroutine the runner started.
	PanicError = gopanic.PanicError
)

// MaxExampleIDs is how many _ids a failure group keeps.
const MaxExampleIDs = bsonx.MaxExampleIDs
