package migration

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Migration is one parsed migration file.
type Migration struct {
	// Version is the number in the file name (0003_x.yaml is 3).
	Version int64 `json:"version"`
	// Name is the file name's snake_case part ("split_name").
	Name string `json:"name"`
	// File is the file's path within the migration directory.
	File string `json:"file"`
	// Description is the free text of the description key.
	Description string `json:"description,omitempty"`
	// Collections are the collections the migration touches, in file order.
	Collections []*Collection `json:"collections"`
	// Run are the run-once operations (run.go), in file order, applied
	// by `up` after the collections' part.
	Run []RunOp `json:"run,omitempty"`
	// Views are the views the migration creates, changes or drops
	// (lifecycle.go), in file order.
	Views []*View `json:"views,omitempty"`
	// Buckets are the time-bucketed families (buckets.go), in file order.
	Buckets []*BucketFamily `json:"buckets,omitempty"`
	// Checksum identifies the file's exact bytes ("sha256:<hex>"); a
	// different checksum for an applied version is drift.
	Checksum string `json:"checksum"`
	// Broken is set on a migration returned alongside parse errors: it holds
	// only what could be read and must not be applied.
	Broken bool `json:"broken,omitempty"`

	positions map[string]Pos
}

// Collection returns the declaration for the named collection, or nil.
func (m *Migration) Collection(name string) *Collection {
	for _, c := range m.Collections {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Position returns where the value at pointer (an RFC 6901 JSON pointer into
// the file's document, such as "/collections/users/validator/$jsonSchema/required")
// starts. When the pointer names nothing in the file, the position of its
// longest existing prefix is returned, so an error about a missing key
// points at the object that lacks it.
func (m *Migration) Position(pointer string) Pos {
	for p := pointer; ; {
		if pos, ok := m.positions[p]; ok {
			return pos
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return Pos{}
		}
		p = p[:i]
	}
}

// Level is a validationLevel: which writes the validator checks.
type Level string

// The validation levels MongoDB accepts.
const (
	LevelOff      Level = "off"
	LevelModerate Level = "moderate"
	LevelStrict   Level = "strict"
)

// Action is a validationAction: what the server does with an invalid write.
type Action string

// The validation actions MongoDB accepts.
const (
	ActionError Action = "error"
	ActionWarn  Action = "warn"
)

// Collection is what one migration declares for one collection.
type Collection struct {
	// Name is the collection name.
	Name string `json:"name"`
	// Validator is the whole validator document ({$jsonSchema: {...}}), or
	// nil when this migration does not change it.
	Validator bson.D `json:"validator,omitempty"`
	// ValidationLevel is empty when the file does not set it.
	ValidationLevel Level `json:"validationLevel,omitempty"`
	// ValidationAction is empty when the file does not set it.
	ValidationAction Action `json:"validationAction,omitempty"`
	// Upgrade turns a document of the previous version into one of this
	// version. Empty means documents of this collection keep their version.
	Upgrade []Step `json:"upgrade,omitempty"`
	// Downgrade, when declared, turns a document of this version back into
	// one of the previous version (used by `mongomig down`).
	Downgrade []Step `json:"downgrade,omitempty"`
	// Indexes lists index changes.
	Indexes Indexes `json:"indexes"`
	// Examples are checked by lint: upgrade(Before) must equal After.
	Examples []Example `json:"examples,omitempty"`
	// References, Copies, Aggregates and Counters are the integrity
	// declarations (integrity.go): nil when the file does not declare the
	// list, empty when it removes it.
	References []Reference `json:"references,omitempty"`
	Copies     []Copy      `json:"copies,omitempty"`
	Aggregates []Aggregate `json:"aggregates,omitempty"`
	Counters   []Counter   `json:"counters,omitempty"`
	// Options are the collection's create options (lifecycle.go), nil
	// when the file sets none.
	Options *CollectionOptions `json:"options,omitempty"`
	// Pos is where the collection's key is in the file.
	Pos Pos `json:"pos"`
}

// JSONSchema returns the $jsonSchema document of the collection's
// validator, if it declares one.
func (c *Collection) JSONSchema() (bson.D, bool) {
	for _, e := range c.Validator {
		if e.Key == "$jsonSchema" {
			d, ok := e.Value.(bson.D)
			return d, ok
		}
	}
	return nil, false
}

// Op names an upgrade step's operation.
type Op string

// The step operations. Declarative ones mirror MongoDB update operators.
const (
	// OpSet sets fields to values ($set).
	OpSet Op = "set"
	// OpDefault sets fields only where they are missing ($set guarded by
	// $exists: false).
	OpDefault Op = "default"
	// OpRename moves fields ($rename).
	OpRename Op = "rename"
	// OpUnset removes fields ($unset).
	OpUnset Op = "unset"
	// OpCopy copies a field's value to another path, keeping the source.
	OpCopy Op = "copy"
	// OpFunc calls a Go function the application registers by name.
	OpFunc Op = "func"
)

// Ops lists every step operation, in documentation order.
var Ops = []Op{OpSet, OpDefault, OpRename, OpUnset, OpCopy, OpFunc}

// Step is one upgrade (or downgrade) step.
type Step struct {
	Op Op `json:"op"`
	// Fields are the step's operands in file order: Path and Value for set
	// and default, Path and To for rename and copy, Path for unset.
	Fields []Field `json:"fields,omitempty"`
	// Func is the registered function's name for OpFunc.
	Func string `json:"func,omitempty"`
	// Discard is `discard: true`: the file means the step to remove the
	// stored data it discards (see [Discards]). Not checksummed.
	Discard bool `json:"discard,omitempty"`
	// Pos is where the step is in the file.
	Pos Pos `json:"pos"`
}

// Field is one operand of a step.
type Field struct {
	// Path is a dotted field path ("contact.email").
	Path string `json:"path"`
	// Value is the value set (set, default), as a BSON value: bson.D,
	// bson.A, int32, int64, float64, string, bool, nil, bson.ObjectID, ...
	Value any `json:"value,omitempty"`
	// To is the destination path (rename, copy).
	To string `json:"to,omitempty"`
	// Pos is where the operand is in the file.
	Pos Pos `json:"pos"`
}

// Indexes are a collection's index changes. Drops happen before creates.
type Indexes struct {
	Create []Index    `json:"create,omitempty"`
	Drop   []IndexRef `json:"drop,omitempty"`
	// Change are indexes changed in place (collMod), Rebuild indexes
	// dropped and built again with new keys or options (lifecycle.go).
	Change  []IndexChange `json:"change,omitempty"`
	Rebuild []Index       `json:"rebuild,omitempty"`
}

// IndexRef names an index to drop.
type IndexRef struct {
	Name string `json:"name"`
	Pos  Pos    `json:"pos"`
}

// Index is an index to create.
type Index struct {
	// Keys is the ordered key specification ({field: 1, other: -1}).
	Keys bson.D `json:"keys"`
	// Name is the index name; when the file gives none it is MongoDB's
	// default name for Keys ("field_1_other_-1").
	Name string `json:"name"`
	// Unique, Sparse and Hidden are the usual index options.
	Unique bool `json:"unique,omitempty"`
	Sparse bool `json:"sparse,omitempty"`
	Hidden bool `json:"hidden,omitempty"`
	// ExpireAfterSeconds makes a TTL index when not nil.
	ExpireAfterSeconds *int64 `json:"expireAfterSeconds,omitempty"`
	// PartialFilterExpression restricts the index to matching documents.
	PartialFilterExpression bson.D `json:"partialFilterExpression,omitempty"`
	// Collation is the index collation document.
	Collation bson.D `json:"collation,omitempty"`
	// Pos is where the index is in the file.
	Pos Pos `json:"pos"`
}

// Example is a document before and after this migration's upgrade, without
// the version field (mongomig manages it).
type Example struct {
	Before bson.D `json:"before"`
	After  bson.D `json:"after"`
	Pos    Pos    `json:"pos"`
}
