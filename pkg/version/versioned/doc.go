// Package versioned is a drop-in for the *mongo.Collection of a versioned
// collection: every document it reads is upgraded to the current version
// before the application sees it, and every document it writes whole is
// stamped with the current version. No call site can forget either.
//
//	users := versioned.New(db.Collection("users"), reg)
//	var u User // today's shape
//	err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u)
//
// Collection has every method of *mongo.Collection, with the driver's
// names, arguments and options (a test compares the method sets); the
// results that carry documents (SingleResult, Cursor) have the driver's
// methods. FindOne, Find, FindOneAndDelete and the findAndModify results
// upgrade each document. InsertOne, InsertMany, ReplaceOne,
// FindOneAndReplace and BulkWrite's inserts and replacements stamp (and,
// with WithValidation, validate) each document, dropping any step marker
// it carries. UpdateOne, UpdateByID, FindOneAndUpdate, UpdateMany and
// BulkWrite's update models update only documents at the current
// version, upgrading (and writing back) the older ones they match first,
// and refuse an update that writes the step marker. Deletes, counts,
// Distinct, Aggregate and Watch are the driver's, on the documents as
// stored ([Collection.UpgradeCursor] upgrades an aggregation's whole
// documents). Unwrap returns the driver's collection.
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
//     each bulk write carries at most Batch updates (fewer after a
//     timeout); a write-back is sent at most three times; Close sends
//     what was accepted before it, until its context ends, and reports
//     every one it did not write in an *UnwrittenError.
//  5. A partial update never lands on an older shape: the update is
//     filtered on the current version, the older documents it matches
//     upgraded first.
package versioned
