// Package runner applies migrations to a MongoDB database and combines the
// lower packages (pkg/migration, pkg/validator, pkg/version) into what the
// command line offers. A team can use it as a library, the way goose is
// used:
//
//	r, err := runner.New(db, migrationsFS, runner.WithVersionOptions(version.WithFunc("splitName", SplitName)))
//	...
//	applied, err := r.Up(ctx)
//
// [New] lints the directory first ([InvalidFilesError]); [Runner.Up],
// [Runner.UpTo] ([Latest] for every pending migration), [Runner.Down] and
// [Runner.DownTo] apply or revert validators (collMod), indexes and data
// downgrades under the migration lock, recording each migration in the
// ledger only after all of its commands succeeded; [Runner.Plan] and
// [Runner.PlanDown] say what they would send; [Runner.Status] compares the
// ledger with the files; [Runner.Pending] lists what Up would apply (the
// dry run of pkg/report checks the documents against it); [Runner.Backfill]
// upgrades the documents nobody reads; [Runner.Unlock] removes a stale
// lock. [Lint] checks files without a database, [Probe] reports what a
// server supports, [Infer] reads an existing database and writes a
// baseline migration (mongomig init), and [Analyze] reports its design
// risks (mongomig analyze).
//
// Errors are typed: [DriftError], [OrderError], [PartialError] (what was
// done, what failed, what was not done), [InterruptedError] (the context
// was cancelled: stopped between two commands or two batches of a
// downgrade's document writes, lock released),
// [LockTimeoutError] and [ErrLockLost]. Results are plain data with JSON
// tags; progress goes to the [Event] callback. The package never prints.
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
