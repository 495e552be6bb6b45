package migration

// Discard is an upgrade step's operand that can discard stored data: an
// unset removes the value at Path wherever a document holds one; a set
// replaces it, which loses data where it replaces a non-empty array or
// document (a set of a scalar is what the step is for). The other steps
// never discard: default only fills a missing field, and an upgrade's
// rename or copy refuses a target that holds another value (package
// version, OverwriteError) rather than overwrite it. A func step is Go
// code mongomig cannot see into: what it drops is its author's to say.
type Discard struct {
	// Migration and File name the migration; Collection the collection
	// whose upgrade holds the step.
	Migration  int64  `json:"migration"`
	File       string `json:"file"`
	Collection string `json:"collection"`
	// Step is the step's index in the collection's upgrade (0-based), Op
	// its operation, Path the operand's field path and Pos where the
	// operand is in the file.
	Step int    `json:"step"`
	Op   Op     `json:"op"`
	Path string `json:"path"`
	Pos  Pos    `json:"pos"`
	// Value is what a set writes (nil for an unset).
	Value any `json:"-"`
	// Allowed: the step says `discard: true`.
	Allowed bool `json:"allowed,omitempty"`
	// Kept, when not nil, is the earlier step of the same migration that
	// keeps the data elsewhere (see [KeptElsewhere]).
	Kept *Keeper `json:"kept,omitempty"`
}

// Guarded reports whether the file accounts for the data the step
// discards: it says `discard: true`, or an earlier step keeps the data.
func (d Discard) Guarded() bool { return d.Allowed || d.Kept != nil }

// Always reports whether the step discards wherever the field is stored
// (an unset), rather than only where it replaces a non-empty array or
// document (a set): lint and up judge the first kind from the file alone.
func (d Discard) Always() bool { return d.Op == OpUnset }

// Keeper is a step that keeps a field's data elsewhere before another step
// of the same migration discards it.
type Keeper struct {
	// Op is the keeping step's operation (copy, rename), Path the field it
	// reads, To where it keeps it, Pos where its operand is in the file.
	Op   Op     `json:"op"`
	Path string `json:"path"`
	To   string `json:"to,omitempty"`
	Pos  Pos    `json:"pos"`
}

// Discards lists every operand of m's upgrades that can discard stored
// data, in file order, each with whether the file accounts for it.
func Discards(m *Migration) []Discard {
	var out []Discard
	for _, c := range m.Collections {
		for i, s := range c.Upgrade {
			if s.Op != OpUnset && s.Op != OpSet {
				continue
			}
			for _, f := range s.Fields {
				d := Discard{Migration: m.Version, File: m.File, Collection: c.Name, Step: i, Op: s.Op, Path: f.Path, Pos: f.Pos, Value: f.Value, Allowed: s.Discard}
				if k, ok := KeptElsewhere(m, c.Name, i, f.Path); ok {
					d.Kept = &k
				}
				out = append(out, d)
			}
		}
	}
	return out
}

// KeptElsewhere reports whether a step of m that runs before step (an
// index into coll's upgrade) keeps the data at path elsewhere: a copy or
// rename of path or of a field containing it. It is the one place that
// decides, for lint, the dry run, up and the backfill. A run-once extract
// of the array at path (or of one containing it) keeps it too: up runs it
// before any document is upgraded, and down embeds it back ([keptByRun]).
func KeptElsewhere(m *Migration, coll string, step int, path string) (Keeper, bool) {
	if k, ok := keptByRun(m, coll, path); ok {
		return k, true
	}
	c := m.Collection(coll)
	if c == nil {
		return Keeper{}, false
	}
	for i := step - 1; i >= 0; i-- {
		s := c.Upgrade[i]
		if s.Op != OpCopy && s.Op != OpRename {
			continue
		}
		for _, f := range s.Fields {
			if f.Path == path || isPrefix(f.Path, path) {
				return Keeper{Op: s.Op, Path: f.Path, To: f.To, Pos: f.Pos}, true
			}
		}
	}
	return Keeper{}, false
}
