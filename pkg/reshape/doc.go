// Package reshape runs a migration's run-once operations (its `run:`
// list): renameCollection, dropCollection, copyCollection, extract,
// embed and go (a Go function registered with version.WithRunFunc), each
// once, by `up`, under the migration lock, after the migration's
// collections' part (validators, indexes) and before its ledger entry.
// It owns three protocols.
//
// The run-once progress document (stored by internal/state, the one
// owner of mongomig_backfill, under "$run$<version>$<index>"):
//
//  1. It is written only under the migration lock: every write (the
//     progress, and every write of an operation to the data) is fenced by
//     the lease the context carries (lease.Fence), so a holder that lost
//     the lock writes nothing more.
//  2. Done is set only after the operation finished, and a done operation
//     is never run again: a run resumed after a crash between the last
//     operation and the ledger entry repeats nothing.
//  3. Progress (lastId, passMoved, moved) is saved after the batch it
//     counts was written, never before: a crash loses at most the count of
//     the batch in flight, never an element, because every write an
//     operation sends is idempotent (the next rule) and the batch is
//     walked again.
//
// The extracted child (extract moves parent.<array> into documents of a
// child collection):
//
//  4. A child's _id is a function of its parent's _id, the element and
//     the parent's epoch for the array ([ChildIDs]): {parent: <parent
//     _id>, key: <element's _id>} for a document with an _id, else
//     {parent: <parent _id>, hash: <sha256 of the element's BSON>, n: <how
//     many equal elements precede it>, e: <epoch>}. The epoch
//     ("_mongomig.<array>.epoch" on the parent, [EpochField]) is an
//     ObjectId, never the same twice for a parent: child _ids are derived
//     only from a parent read with one, so one that holds such an element
//     and none is stamped first (one update for a batch's parents, filtered
//     on the field missing or null, then the parents are read again); and the
//     guarded update of rule 5 sets a new one when it removes an element
//     without an _id, in that same update. So a rerun after a crash before
//     that update finds the epoch it derived with and derives the same
//     _ids (the children are there: they are inserted, never replaced,
//     and writing one twice inserts it once); an element equal to a moved
//     one that an old release appends after the removal is numbered at the
//     new epoch, never the moved one's; an old release that replaces the
//     parent with a copy read earlier puts back the array and the epoch as
//     they were together, so what it puts back is found moved and what it
//     appended is new. An old release that replaces the parent from a
//     struct that does not know _mongomig drops the epoch: the parent is
//     stamped anew, so every element it wrote gets a new _id and is moved,
//     none is taken for a moved one (no acknowledged element is lost).
//     The price is a duplicate when what such a replace wrote back is an
//     element moved already (its copy was read before the guarded update,
//     or the move stopped after the children and before that update): the
//     same document as an equal element appended after the move, which
//     must be moved. Such a parent is stamped {replaced: ObjectId} when it
//     already has children made with a {parent, hash, n} _id (checked for
//     the parents a pass stamps when the child collection held documents
//     as the pass began, and for a parent stamped again within a pass), so
//     every child that can be a duplicate has "_id.e.replaced" and is
//     counted in the operation's summary; only one whose hash an earlier
//     child of the same parent has can be a duplicate (of that child, or
//     an equal element written again: the data cannot tell). With keep:
//     {first: k} the kept first k are numbered without an epoch (they
//     never leave the array).
//  5. The children of a parent are written before the parent's array is
//     changed, and the parent's update is filtered on the array exactly as
//     read: an element an old release appended (or any change) since the
//     read makes the update match nothing, the parent is read again, and
//     the appended element is moved by this pass or the next. An element is
//     never removed from a parent before its child exists, and never
//     becomes two children (but rule 4's marked duplicate). A move's state
//     is the parent's array and epoch and the children, nothing else, so a
//     move stopped between any two of its commands resumes by walking the
//     batch again: stopped after the stamp, the parent holds the epoch the
//     rerun derives with; after the children and before the guarded update,
//     the rerun derives the same _ids and finds them inserted; after the
//     update and before the progress, the parent no longer holds what was
//     moved (with keep: {first: k} the kept k derive the same _ids, and
//     are not removed). A replace by an old release in any of those gaps is
//     rule 4's: a copy carries its epoch, a struct drops it.
//  6. The count field (keep: {count: F}) is incremented in that same
//     guarded update by the number of elements it removes, so it counts
//     every moved element once, whether the parent is updated by field or
//     replaced whole by an old release.
//  7. The operation is finished when a whole pass over the parents moved
//     nothing; an element appended after that stays embedded, and a reader
//     of the new release reads both (the embedded remainder and the
//     children, by [ChildIDs] without duplicates): docs/file-format.md.
//     While a parent's children are written and its guarded update is not
//     yet sent, its elements are both; the parent holds the epoch they
//     were derived with, so [ChildIDs] names each child and the reader
//     returns it once. A parent without an epoch has no child at any _id
//     [ChildIDs] gives its elements (but the kept first k).
//     While a parent may still hold the array, pkg/runner keeps the
//     parent's validator window open for the schema before the extract's
//     migration (internal/window, invariants 5 to 7): it closes only
//     after Done, a proof that no parent holds the array, and no older
//     live release.
//
// Down re-embeds ([Revert]: extract's inverse, its progress stored beside
// the operation's under "$run$<version>$<index>$down"):
//
//  8. A parent's array is set to the elements it holds plus each of its
//     children (the documents of To whose ref names it) it does not hold
//     yet, in the children's _id order, by one update filtered on the
//     array exactly as read (rule 5's guard); with keep: {count: F}, F is
//     decremented in that update by the elements it adds (rule 6's
//     inverse). When the parent has children with a {parent, hash, n}
//     _id, that update also records their _ids on the parent
//     ("_mongomig.<array>.embedded") and sets a new epoch (the elements
//     it embeds could no longer be told apart by hash and rank). A child
//     is held when an element of the array has the child's _id by rule 4
//     at the parent's epoch, or the record names it, so a child embedded
//     by a down that stopped before deleting it is not embedded twice.
//     Extract's guarded update removes the record.
//  9. The children are deleted only after that update matched (or found
//     them all held): a child is never deleted before its parent holds
//     it, and is never embedded twice.
//  10. The revert is finished when a whole pass over the children embedded
//     and deleted nothing; children whose parent does not exist stay where
//     they are, counted in the result. Only then is the operation's
//     progress forgotten (state.ForgetRun), so a later up runs it again.
//
// The embedded copy (embed copies fields of the documents of From that
// the reference at via names into the referencing documents of Into):
//
//  11. Embed refuses to start ([HeldError]) while a document of Into holds
//     a copied field: the copy would overwrite it and down would remove
//     it. It then walks Into in _id order, pass after pass, until a pass
//     walked in full by one run writes nothing (a run resumed midway
//     walks one more pass), so a copy an old release removed by replacing
//     a whole document, or a reference changed since, is written by the
//     next pass. The documents whose reference names no document of From
//     are counted by that last pass, the first of them by _id, and left
//     without the copy.
//  12. A document's copies are set by one update ($set of the copied
//     paths only, never of another field) filtered on its _id and on the
//     reference and each copy exactly as read (for copies inside an array
//     of documents, the whole array as read): a reference or copy changed
//     since the read makes it match nothing, and the document is read
//     again with the source its reference names now. A snapshot is
//     written only where it is absent; a mirror where it differs from the
//     source; a field the source lacks is neither written nor removed.
//  13. Down removes the copied paths from every document holding one
//     ($unset; inside an array, guarded on the array as read); what a
//     snapshot held as copied cannot come back, and the result says so
//     (Unrestorable).
package reshape
