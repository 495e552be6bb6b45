package version

import (
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A FuncOption qualifies a Go function registered with [WithFunc].
type FuncOption interface {
	applyFunc(*funcSpec) error
}

type funcSpec struct {
	// reads, when declared, are the only top-level fields the function
	// sees and may change (with _id, which it sees and may not change).
	reads    []string
	declared bool
}

type funcOption func(*funcSpec) error

func (f funcOption) applyFunc(s *funcSpec) error { return f(s) }

// Fields declares the top-level fields a func step's function reads and
// writes. The function then gets a document holding only those fields
// (and _id), in their stored order, and what it returns replaces them:
// a field it returns is set, one of them it leaves out is removed, and
// every other field of the document is kept as stored, untouched. So the
// declaration cannot be wrong the way a comment can: the function cannot
// read what it did not declare.
//
// What it buys: a write-back (and a backfill's guarded update) after a
// func step that declares its fields guards only those, the fields the
// upgrade changes and the version, instead of every field of the
// document as read. A concurrent writer of an unrelated field (a counter,
// a last-seen time) then no longer makes the write-back match nothing,
// and the guard the server evaluates is smaller.
//
// Names are top-level field names: no '.', no leading '$', not _id
// (always there) and not empty.
func Fields(fields ...string) FuncOption {
	return funcOption(func(s *funcSpec) error {
		if len(fields) == 0 {
			return fmt.Errorf("version.Fields needs at least one field (without it, the function sees the whole document)")
		}
		for _, f := range fields {
			if f == "" || f == "_id" || f[0] == '$' || containsDot(f) {
				return fmt.Errorf("version.Fields(%q): a field the function reads is a top-level field name other than _id (which it always sees)", f)
			}
			if !slices.Contains(s.reads, f) {
				s.reads = append(s.reads, f)
			}
		}
		s.declared = true
		return nil
	})
}

// view is what a func step with declared reads gets of d: _id and the
// declared fields, in d's order.
func (s *step) view(d bson.D) bson.D {
	out := make(bson.D, 0, len(s.reads)+1)
	for _, e := range d {
		if e.Key == "_id" || slices.Contains(s.reads, e.Key) {
			out = append(out, bson.E{Key: e.Key, Value: cloneValue(e.Value)})
		}
	}
	return out
}

// merge puts a declared-reads function's result back into d: each field
// of d keeps its place (a declared one takes the result's value, or is
// removed when the result leaves it out; _id and the undeclared ones stay
// as they are), and the result's new fields follow in its order. A
// result that names an undeclared field, or changes _id, is an error: the
// function may only change what it declared.
func (s *step) merge(d, out bson.D) (bson.D, error) {
	for _, e := range out {
		if e.Key == "_id" {
			if old, _ := lookupD(d, "_id"); !sameValue(old, e.Value) {
				return d, fmt.Errorf("func %s changed _id, which a function never may", s.name)
			}
			continue
		}
		if !slices.Contains(s.reads, e.Key) {
			return d, fmt.Errorf("func %s returned field %q, which it did not declare with version.Fields (declared: %v): declare every field it sets", s.name, e.Key, s.reads)
		}
	}
	merged := make(bson.D, 0, len(d)+len(out))
	for _, e := range d {
		if e.Key == "_id" || !slices.Contains(s.reads, e.Key) {
			merged = append(merged, e)
			continue
		}
		if v, ok := lookupD(out, e.Key); ok {
			merged = append(merged, bson.E{Key: e.Key, Value: v})
		}
	}
	for _, e := range out {
		if e.Key != "_id" && !hasKey(d, e.Key) {
			merged = append(merged, e)
		}
	}
	return merged, nil
}
