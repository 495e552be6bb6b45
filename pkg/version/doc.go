// Package version upgrades documents lazily, in application code, from the
// version they were written at to the current one.
//
// A [Registry] is built from the same migration files `mongomig up` applies
// (any fs.FS, typically an embed.FS) plus the Go functions the application
// registers for `func:` steps. Reading a document, the application calls
// [Registry.Upgrade] (bson.D), [Registry.UpgradeRaw] (bson.Raw) or
// [Registry.UpgradeM] (bson.M): a document already at the current version
// costs one field lookup; an older one gets every later upgrade of its
// collection, in order. [Registry.Stamp] marks a new document as current.
// A collection no migration names is an [ErrUnknownCollection] (a typo
// would otherwise stamp version 0) unless declared with [WithCollections].
//
// Declarative steps follow MongoDB's update operators: set ($set), unset
// ($unset), rename ($rename), default ($set where the field is missing) and
// copy, with MongoDB's rules for paths through arrays, null and scalars: a
// document MongoDB would refuse is refused with a [*PathError] naming the
// path, inside an [*UpgradeError] naming the _id. The package links neither
// the CLI nor the sandbox.
//
// What a version is, for every path (lazy upgrades here; the backfill,
// validate, status, the validator window and down in pkg/runner): the
// version field holds a non-negative whole number, stored as a BSON int32,
// int64 or double (a double must be integral and below 2^53); a missing or
// null field (a Go nil, bson.Null{} or raw BSON null) is version 0. Anything else (a negative number, a fraction, a
// string, an array, a Decimal128, undefined, a document), and a version
// field that appears more than once among the top-level keys, make the
// document invalid: a [*VersionError] naming its _id, never upgraded. The
// filters [Registry.VersionIs], [Registry.VersionBelow] and their kin are
// the server's side of the same rule; the server-side backfill's step
// marker and its invariants are described at [MarkerField].
//
// Only mongomig writes the version field and the marker: a registry is
// never built from a declarative step that reads, writes or removes
// either, or a path inside them ([CheckReservedFields]).
package version
