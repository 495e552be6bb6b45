// Package bsonx holds the small BSON helpers and result types that the
// products (pkg/runner, pkg/backfill, pkg/report, pkg/lint, pkg/inspect)
// share: values written as relaxed Extended JSON, MongoDB's _id order over
// that text, a document's failures grouped by rule, field look-ups. It
// imports the driver's bson package, pkg/version and the standard library
// only; it never prints.
package bsonx
