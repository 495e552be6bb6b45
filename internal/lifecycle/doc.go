// Package lifecycle holds the pure planning of a collection's lifecycle
// (docs/lifecycle.md) that pkg/runner sends: which collection options and
// their changes a migration needs and which it cannot make to what the
// server holds, the features each needs, the refusal reasons from the
// server's probed features, where the files declare each, views and
// in-place index changes, the expired backlog a new TTL index would
// delete (its filter and cutoff), the validation settings (MongoDB 8.1's
// errorAndLog, 9.0's constraint) the server lacks, the commands of
// constraint's raise and lowering (constraint.go), what down reverts of a
// migration's lifecycle and what it cannot (revert.go), a time-bucketed
// family's members (which exist, which a run creates, keeps and drops),
// and the collections no migration declares. It reads nothing and sends
// nothing: internal/lifecycleplan reads the server (listCollections,
// listIndexes, counts) and builds the command documents
// (internal/cmddoc), the runner probes the server and sends them under
// the migration lock.
package lifecycle
