// Package integrity checks and repairs the promises of a denormalized
// schema that the migration files declare and no server enforces
// (migration.Reference, Copy, Aggregate, Counter): a reference names a
// document that exists; a mirror copy equals its source now, a snapshot
// copy exists and keeps its source's type; an aggregate equals the count,
// sum, min or max of its children; a counter is at or above the largest
// value handed out.
//
// [Checker.Check] reads; it joins on the server where the server can
// ($lookup for references, $group for aggregates: a server that answers
// NotImplemented or CommandNotFound gets the client-side join instead)
// and otherwise in batches of [Options.BatchSize] documents, each batch's
// referenced documents fetched with one $in query, so memory is bounded by
// the batch, not the collection.
//
// [Checker.Repair] writes the fixes a check found. Every write is guarded
// on the stale value the check saw (the filter holds it), so a concurrent
// $inc or edit is never erased: a write that matches nothing re-checks
// the document and retries with what it finds now. A snapshot is never
// written; a dangling reference is only removed (or its document deleted)
// when its rule says so, after the referenced document is looked up again.
// A repair can still race with an application write that is half done (a
// comment inserted whose post's count is not yet incremented): the next
// check sees that as drift, and the next repair fixes it. A repair stores
// its progress per rule (internal/state, "$repair$<rule>"), so one that
// was stopped goes on from the last document it finished; with
// [Options.Leases] it holds [RepairLease], so two repairs of a database
// never run at once.
//
// [Checker.Propagate] is the application's call after it changed a
// source document: it writes the new value to every mirror copy, in
// batches, setting the copied field alone (array filters for copies
// inside arrays), so concurrent edits of other fields survive and a rerun
// writes only what is left; a propagation killed midway leaves exactly
// what Check reports and Repair fixes.
//
// [Checker.Follow] is a long-running repair on a server with change
// streams: it applies each change to a collection the rules read as it
// happens ([Checker.ApplyChange], the same guarded writes), storing the
// stream's resume token after each (internal/state's "$follow$") under
// [FollowLease], and runs a full Repair first when no token is stored or
// its history is lost (follow.go). Neither test server has change
// streams: the stream itself has never run against a server.
package integrity
