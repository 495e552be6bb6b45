// Package lease owns mongomig's lease protocol: the migration lock taken by
// up and down, a collection's backfill lease and the range leases of a
// parallel backfill are all leases, one document each in one collection
// (mongomig_lock by default), named by its _id.
//
// It sits between pkg/runner and the driver: it imports only the MongoDB
// driver and the standard library.
//
// Invariants:
//
//   - Acquisition inserts a document with a fixed _id (the lease's name).
//     An insert is the one write that is atomic on every server: at most
//     one contender wins. The document carries the holder (owner, host,
//     pid), acquiredAt, expiresAt and a token fresh per acquisition.
//   - Expiry is judged by the server's clock only (hello's localTime):
//     acquiredAt and expiresAt are server times, never a client's.
//   - A contender takes over only a lease that expired by the server's
//     clock, by deleting exactly that stale document (its _id, owner,
//     acquiredAt and expiresAt), and then races for the insert like
//     everyone else.
//   - Renewals and the release match the acquisition's token, so a process
//     can never renew or delete a lease it no longer holds, and a renewal
//     never extends a lease the server's clock says expired.
//   - Every write of the protocol uses majority write concern, so an
//     acknowledged acquisition survives a replica-set failover.
//   - The holder fences itself. validUntil is, on the holder's monotonic
//     clock, the local time at which the request of its last successful
//     acquisition or renewal was sent, plus the lease, minus a margin (a
//     fifth of the lease) for clock rates and round trips. Before every
//     write it protects, the caller calls [Held.Fence]: within validUntil
//     it reads the lease document to prove it still holds this token (an
//     operator may have removed it with `unlock --force`), and a read that
//     gets no answer (a network error, no reply within the margin) leaves
//     the clock as the guarantee; answered or not, Fence succeeds only if
//     validUntil has not passed once the read returned. Past validUntil
//     it renews once itself, and otherwise fails with [ErrLost] before
//     anything is sent.
//   - A heartbeat renews every quarter of the lease; a failed renewal is
//     retried at the next tick, until validUntil passes: then the lease is
//     lost, and [Held.Lost] is closed.
//   - A loss is final: once [Held.Fence] has returned [ErrLost] or Lost is
//     closed, the holder sends nothing more for this lease (no renewal, no
//     verification, no release).
//   - [Held.Release] deletes the document (matched on the token) also when
//     the caller's context was cancelled (SIGINT, SIGTERM): the next
//     contender starts at once instead of waiting for the lease to expire.
//   - Where the server has transactions (replica sets, sharded clusters),
//     [Held.Transact] runs a write in one transaction with an update of the
//     lease document matched on the token: a holder paused between its
//     fence and the write cannot commit after a takeover, since the
//     takeover's delete and our update conflict. Elsewhere nothing covers
//     the gap between a fence and its write: the margin covers clock rates
//     and round trips, not a pause. A holder paused right after its fence
//     (SIGSTOP, a frozen VM, a long GC) for longer than the rest of its
//     lease sends its write after another process took the lease over.
//     No client-side check can prevent that; the caller fences again
//     after each write to learn that it was sent after the loss, and
//     repairs what it may have undone (pkg/runner: reassert.go).
//
// The package leasetest is a conformance suite for these invariants, run
// against the embedded sandbox and, with MONGOMIG_TEST_URI, on MongoDB.
package lease
