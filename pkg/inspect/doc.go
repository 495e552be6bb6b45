// Package inspect reads an existing MongoDB database and describes it, for
// a team adopting mongomig: [Infer] observes every collection's documents
// and indexes and [Inference.File] renders them as a baseline migration
// file (mongomig init); [Analyze] measures what schema design rules are
// about (document sizes against the 16 MB limit, array lengths and their
// growth with document age, sparse fields, mixed types, nesting, the
// version histogram) and lists the risks found (mongomig analyze).
//
// Invariants: both only read (find, $sample, listCollections,
// listIndexes, estimatedDocumentCount), never write, and need no
// migration file. Each collection is read in one streaming pass whose
// memory grows with the shape of the documents (distinct field paths,
// bounded enum candidates, array-length counters), never with their
// number. The file holds no document value except the string values of
// small enums and the examples asked for ([InferOptions].Examples).
// A collection named by the caller that the database does not have is an
// [ErrUnknownCollection]. Results are plain data with JSON tags; progress
// goes to the Progress callback of the options; the package never prints.
//
// It depends on the lower packages (pkg/migration, pkg/version,
// pkg/probe, internal/bsonx) only: not on pkg/runner or the other
// products.
package inspect

import "github.com/mongomig/mongomig/internal/bsonx"

// ExtJSON is a value written as relaxed MongoDB Extended JSON.
type ExtJSON = bsonx.ExtJSON
