// Package report owns the validation reports and the index-build
// prediction, on documents as stored: [Reporter.Validate] (mongomig
// validate) checks every document of a collection against the validator
// the migration files end with, after the upgrades it would get
// (pkg/version), and groups the failures by path and rule;
// [Reporter.DryRun] (the report of up --dry-run) does the same against the
// validators in force once the pending migrations it is given are
// applied, and predicts whether the unique indexes they create would
// build ([IndexBuild]).
//
// Invariants: a report only reads (find, count, listCollections; never a
// write or a collMod) and never prints: progress goes to
// [Options.Progress]. Memory does not grow with the number of documents
// (bounded channels, failure groups keeping [MaxExampleIDs] _ids unless
// [Options.AllExampleIDs]); the index prediction keeps one entry per
// distinct key. Which migrations are pending is the caller's to say (the
// ledger is pkg/runner's): this package imports no other product.
package report

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
	// VersionCount is how many documents sit at one document version.
	VersionCount = bsonx.VersionCount
	// PanicError is a panic recovered in a document checker.
	PanicError = gopanic.PanicError
)

// MaxExampleIDs is how many _ids a failure group keeps.
const MaxExampleIDs = bsonx.MaxExampleIDs
