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
package version
