// Package release owns mongomig's release announcements: an application
// instance that uses pkg/version says which release it is and which
// document version it knows of each collection, in one heartbeat document
// of its own in mongomig_releases, so that the steps that would hand it
// documents it cannot read (a backfill, a write-back, closing the
// validator window) can hold while it runs.
//
// It imports pkg/version, the MongoDB driver and the standard library
// only: application code links neither the CLI nor the sandbox.
//
// Invariants:
//
//   - One document per announcing instance, named by an _id fresh per
//     [Announce] (a random token): no two instances ever write the same
//     document, and only its announcer writes it, with $set of its own
//     fields (an upsert, so a document removed meanwhile comes back), or
//     deletes it ([Announcement.Close]). The one other writer is the
//     pruning of [Announce], which deletes documents expired for longer
//     than [PruneAfter] by the server's clock.
//   - A document carries the release's name, the instance (host, pid),
//     and per collection the version its registry upgrades documents to
//     ([version.Registry.Current]); it never changes during the
//     announcement's life.
//   - Liveness is judged by the server's clock only (hello's localTime):
//     renewedAt and expiresAt are server times, expiresAt = the server's
//     time of the renewal + TTL. A release is live while expiresAt is after
//     the server's time now ([Live]).
//   - The heartbeat renews every Renew (default TTL/3). A renewal that
//     finds, by the server's clock, that the previous expiresAt had passed
//     (the process was paused, or the server unreachable, for longer than
//     the TTL) is a gap: counted and reported to Options.OnGap, since
//     anything that checked the releases during it did not see this one.
//     Nothing can prevent that: a paused process cannot announce; the
//     holds are as good as the TTL is longer than the pauses.
//   - A release is behind for a collection and a target version when it
//     names the collection with a version below the target ([Behind]): it
//     would answer a document at the target with a *version.TooNewError.
//     A release that does not name a collection does not read it.
//   - Every write uses majority write concern.
package release
