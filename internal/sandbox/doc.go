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
//
// A directory stays startable after the process serving it is killed at any
// moment: FerretDB v1.24 takes several SQLite commits for one client-visible
// step (creating a database, a collection, an index; dropping one), and
// [Start] repairs, before FerretDB opens the files, each state a kill
// between two of those commits leaves (repair.go, catalogue.go). A repair
// never deletes a document: it removes a file or table only when SQLite
// shows it empty, sets a table with documents aside, and otherwise touches
// only indexes and FerretDB's catalogue. What it cannot prove harmless it
// refuses with a [DamagedError] naming the file.
package sandbox
