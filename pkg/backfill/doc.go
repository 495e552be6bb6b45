// Package backfill upgrades the documents nobody reads: every document of
// a collection below its current version, in _id order, each written as a
// guarded delta, resumable from a checkpoint, throttled, on the server
// where every step has an update-operator form, or split into _id ranges
// shared by several workers and processes ([Options].Workers).
//
// It takes what it needs from the migration runner through [Source] (the
// applied version, leases, the logger, the registry), never the runner
// itself; its checkpoints are internal/state's, written only through that
// package's owner.
//
// Invariants:
//
//  1. A backfill never upgrades a document past the document version the
//     applied migrations give: it refuses to start otherwise, and it
//     re-reads the applied version under its lease at every checkpoint
//     save, stopping (with nothing more written) once its target is no
//     longer applied (a down reverted it).
//  2. Every write happens under the collection's backfill lease (or a
//     range's lease) and after its fence; a holder that lost the lease
//     writes nothing more, the checkpoint included.
//  3. A write never erases a concurrent application write: it is filtered
//     on the old values of the fields it changes (where the server can
//     evaluate that atomically; elsewhere the run says so, see
//     events.BackfillUnguarded).
//  4. A proof (no document below the target remains) is recorded only
//     conditional on the checkpoint generation read when the walk began,
//     so a window reopened meanwhile is never closed on a stale proof.
package backfill

import (
	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/state"
)

// FailureGroup is every document failing one rule at one path.
type FailureGroup = bsonx.FailureGroup

// Collection is where backfill checkpoints are kept, one document per
// collection (and per range of a parallel backfill).
const Collection = state.Collection
