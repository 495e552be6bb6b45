// Package sandbox runs an embedded MongoDB-compatible server (FerretDB v1.24
// with SQLite storage) inside the current process.
//
// It backs the global --embedded flag, the demo command and the test suite.
// It is internal on purpose: FerretDB adds tens of megabytes to a binary, so
// nothing that application code links (pkg/...) may import it.
//
// The sandbox is a real MongoDB wire-protocol server, not a mock, but it lacks
// several commands MongoDB has (collMod, validators, $jsonSchema queries,
// pipeline updates, transactions). Callers detect capabilities at run time
// instead of assuming them.
package sandbox
