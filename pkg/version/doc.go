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
//
// Declarative steps follow MongoDB's update operators: set ($set), unset
// ($unset), rename ($rename), default ($set where the field is missing) and
// copy. The package links neither the CLI nor the sandbox.
package version
