// Package versioned is a drop-in for the *mongo.Collection of a versioned
// collection: every document it reads is upgraded to the current version
// before the application sees it, and every document it writes whole is
// stamped with the current version. No call site can forget either.
//
//	users := versioned.New(db.Collection("users"), reg)
//	var u User // today's shape
//	err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u)
//
// FindOne, Find, FindOneAndUpdate, UpdateOne and FindOneAndReplace keep
// the driver's names, arguments and options; their results
// (SingleResult, Cursor) have the driver's methods. InsertOne,
// InsertMany, ReplaceOne and FindOneAndReplace stamp (and, with
// WithValidation, validate) each document, dropping any step marker it
// carries. UpdateOne and FindOneAndUpdate update only a document at the
// current version, upgrading (and writing back) an older one first, and
// refuse an update that writes the step marker. Unwrap returns the
// driver's collection for everything else.
//
// The package imports pkg/version and the driver only. Its invariants:
//
//  1. A document already at the current version is decoded by the
//     driver from the bytes it read: no copy, no allocation beyond the
//     driver's own, one scan of its top-level keys (version.Registry.UpgradeRaw).
//  2. An older document is upgraded with version.Registry.UpgradeRaw,
//     then decoded, so an old shape never reaches today's struct; a
//     document newer than the registry knows is a *version.TooNewError
//     (and a failing step a *version.UpgradeError): the target is left
//     alone, never zeroed, and nothing is written back.
//  3. A write-back is always version.DeltaOf's guarded update: it writes
//     only the fields the upgrade changed, and matches only while each of
//     them, the version field and the step marker (version.MarkerField)
//     still hold what was read. A writer's change made between the read
//     and the write-back is never erased: the write-back loses, and is
//     counted as lost.
//  4. The Deferred policy never blocks a read: a full queue drops the
//     write-back (counted). At most Queue+Batch write-backs are held;
//     each bulk write carries at most Batch updates; Close sends what
//     was accepted before it.
package versioned
