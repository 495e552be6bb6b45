package version

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// Func is an upgrade step written in Go and registered by name. It gets a
// document of the previous version, which it may modify, and returns the
// document of this version. It must not touch _id or the version field.
type Func func(doc bson.D) (bson.D, error)

// step is a compiled migration step: paths split once, at load time.
type step struct {
	op     migration.Op
	fields []field
	fn     Func
	name   string // the func's name
	src    migration.Step
	// idPath is the first operand path written through _id, if any: the
	// step then checks per document that _id keeps its value.
	idPath string
	// overwrites: a rename or copy replaces a target that holds another
	// value, as MongoDB's $rename does. Only downgrades' do: a downgrade
	// rebuilds the earlier shape from the current one, whose values are
	// the ones to keep (copy: {contact.email: email} restores the email
	// the current release changed); an upgrade's refuses (OverwriteError).
	overwrites bool
	// reads are the top-level fields a func step's function declared
	// with [Fields] (readsDeclared): the only ones it sees and changes.
	reads         []string
	readsDeclared bool
}

// readsAny reports whether the step may read any field: a func step
// whose function did not declare its fields with [Fields].
func (s *step) readsAny() bool {
	return s.op == migration.OpFunc && !s.readsDeclared
}

type field struct {
	path, to   string
	segs, toSg []string
	value      any
	// slot and toSlot are the top-level names of segs and toSg in their
	// chain's keyTable (-1: none), for a topIndex.
	slot, toSlot int
}

func compileStep(s migration.Step, funcs map[string]Func, funcReads map[string][]string) (step, error) {
	c := step{op: s.Op, src: s, name: s.Func}
	if s.Op == migration.OpFunc {
		fn, ok := funcs[s.Func]
		if !ok {
			return c, fmt.Errorf("func %q is not registered", s.Func)
		}
		c.fn = fn
		c.reads, c.readsDeclared = funcReads[s.Func], funcReads[s.Func] != nil
		return c, nil
	}
	for _, f := range s.Fields {
		cf := field{path: f.Path, to: f.To, segs: strings.Split(f.Path, "."), value: f.Value, slot: -1, toSlot: -1}
		if f.To != "" {
			cf.toSg = strings.Split(f.To, ".")
		}
		switch {
		case c.idPath != "":
		case cf.toSg != nil && cf.toSg[0] == "_id":
			c.idPath = f.To
		case cf.toSg == nil || s.Op == migration.OpRename:
			if cf.segs[0] == "_id" {
				c.idPath = f.Path
			}
		}
		c.fields = append(c.fields, cf)
	}
	// MongoDB 5.0+ applies an update's fields in field-name order (numeric
	// names numerically), whatever order the update lists them in; so new
	// fields are appended in that order.
	slices.SortStableFunc(c.fields, func(a, b field) int { return comparePaths(a.segs, b.segs) })
	return c, nil
}

// comparePaths orders dotted paths segment by segment, as MongoDB orders
// update fields: numeric segments numerically, others bytewise.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		na, aNum := arrayIndex(a[i])
		nb, bNum := arrayIndex(b[i])
		var c int
		if aNum && bNum {
			c = cmp.Compare(na, nb)
		} else {
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// apply runs the step on d, which the caller owns (see set).
func (s *step) apply(d bson.D) (bson.D, error) {
	if s.idPath == "" {
		return s.applyOps(d)
	}
	before, had := lookupD(d, "_id")
	out, err := s.applyOps(d)
	if err == nil && had {
		after, kept := lookupD(out, "_id")
		err = s.checkID(before, after, kept)
	}
	return out, err
}

// checkID refuses a document whose _id the step changed. MongoDB accepts
// an update of _id that leaves it binary-equal (a no-op: SetNode's
// updateExistingElement) and refuses any other with ImmutableField
// (src/mongo/db/update/modifier_node.cpp, checkImmutablePathsNotModified
// and applyToNonexistentElement). A document without _id (a lint example)
// has nothing to keep.
func (s *step) checkID(before, after any, kept bool) error {
	if kept && sameValue(before, after) {
		return nil
	}
	return &PathError{s.idPath, "would change the immutable field _id, which MongoDB refuses (ImmutableField); an upgrade may only set _id to the value it already holds"}
}

func (s *step) applyOps(d bson.D) (bson.D, error) {
	var err error
	switch s.op {
	case migration.OpSet:
		for i := range s.fields {
			f := &s.fields[i]
			if d, err = set(d, f.segs, cloneValue(f.value), f.path); err != nil {
				return d, err
			}
		}
	case migration.OpDefault:
		for i := range s.fields {
			f := &s.fields[i]
			at := index(d, f.segs[0])
			if len(f.segs) == 1 {
				if at < 0 { // top level: a missing field is appended
					d = append(d, bson.E{Key: f.path, Value: cloneValue(f.value)})
				}
				continue
			}
			if existsAt(d, at, f.segs) {
				continue
			}
			if d, err = setAt(d, at, f.segs, cloneValue(f.value), f.path); err != nil {
				return d, err
			}
		}
	case migration.OpUnset:
		for i := range s.fields {
			d = unset(d, s.fields[i].segs)
		}
	case migration.OpRename, migration.OpCopy:
		for i := range s.fields {
			if d, err = s.move(d, &s.fields[i]); err != nil {
				return d, err
			}
		}
	case migration.OpFunc:
		return s.callFunc(d)
	default:
		return d, fmt.Errorf("unknown step %q", s.op)
	}
	return d, nil
}

// callFunc runs a func step's Go function on a copy of d. A panic in it
// is recovered and returned as an error, like one the function returned:
// the caller names the collection, the document's _id and the step
// (UpgradeError), a backfill counts the document among its failures and
// goes on, and a lazy read returns the error instead of crashing the
// application.
func (s *step) callFunc(d bson.D) (out bson.D, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = d, fmt.Errorf("func %s panicked: %s (a bug in the function: fix it, then run again)", s.name, hideSecrets(fmt.Sprint(p)))
		}
	}()
	if !s.readsDeclared {
		if out, err = s.fn(cloneDoc(d)); err != nil {
			return d, fmt.Errorf("func %s: %w", s.name, secretsHidden{err})
		}
		return out, nil
	}
	if out, err = s.fn(s.view(d)); err != nil {
		return d, fmt.Errorf("func %s: %w", s.name, secretsHidden{err})
	}
	return s.merge(d, out)
}

// connPassword is the password of a connection string quoted in a
// function's error or panic (mongodb://user:password@host).
var connPassword = regexp.MustCompile(`(mongodb(?:\+srv)?://[^:/\s@]*):[^@\s/]*@`)

// hideSecrets replaces the passwords of the connection strings text
// quotes with ***: a func's message ends up in failure reports and CI logs.
func hideSecrets(text string) string {
	return connPassword.ReplaceAllString(text, "$1:***@")
}

// secretsHidden is a func's error whose message hides the passwords of
// the connection strings it quotes; errors.Is and As still see the error.
type secretsHidden struct{ err error }

func (e secretsHidden) Error() string { return hideSecrets(e.err.Error()) }
func (e secretsHidden) Unwrap() error { return e.err }

// move implements rename ($rename) and copy (the same rules, keeping the
// source): see locate for the source; a target through an array is
// refused ("The destination field cannot be an array element",
// rename_node.cpp), one through a scalar or null fails as $set does.
func (s *step) move(d bson.D, f *field) (bson.D, error) {
	at := index(d, f.segs[0])
	v, found, problem := locateAt(d, at, f.segs)
	switch {
	case problem != "":
		return d, s.sourceError(f, problem)
	case !found:
		return d, nil // checked before the target, as rename_node.cpp does
	}
	if crossesArray(d, f.toSg) {
		return d, s.targetError(f)
	}
	if t, exists := get(d, f.toSg); exists && !s.overwrites && !sameValue(t, v) {
		return d, s.occupiedError(f, t)
	}
	if s.op == migration.OpRename {
		// $rename is $unset of the source then $set of the target: an
		// existing target is replaced where it stands, a new one appended.
		d = unsetAt(d, at, f.segs)
	} else {
		v = cloneValue(v)
	}
	return set(d, f.toSg, v, f.to)
}

// occupiedError refuses a rename or copy onto a target that already holds
// another value: see [OverwriteError].
func (s *step) occupiedError(f *field, target any) error {
	return &OverwriteError{Op: string(s.op), From: f.path, To: f.to, Holds: kindOf(target)}
}

// OverwriteError is a rename or copy step whose target already holds a
// value other than the source's. MongoDB's $rename overwrites it
// (src/mongo/db/update/rename_node.cpp applies a SetElementNode to the
// existing element, a no-op only when the values are identical), which
// would destroy what is stored there, often a value the current release
// wrote meanwhile. A migration step never destroys data silently: the
// step fails (an [UpgradeError] wraps this error), the document is left
// as it is and reported. The message names the target's type, never its
// value (application data).
type OverwriteError struct {
	Op       string // rename or copy
	From, To string
	Holds    string // the target's BSON type
}

func (e *OverwriteError) Error() string {
	return fmt.Sprintf("path %q: %s target already holds a different value (%s) than the source %q; a step never overwrites a value (MongoDB's $rename would): remove or move the target first (an earlier unset or rename), or fix the document", e.To, e.Op, e.Holds, e.From)
}

// kindOf names v's BSON type for an error.
func kindOf(v any) string {
	switch v.(type) {
	case nil, bson.Null:
		return "null"
	case bson.A:
		return "array"
	case bson.D:
		return "document"
	}
	return bsonTypeName(v)
}

func (s *step) sourceError(f *field, problem string) error {
	return &PathError{f.path, fmt.Sprintf("%s source %s", s.op, problem)}
}

func (s *step) targetError(f *field) error {
	return &PathError{f.to, fmt.Sprintf("%s target cannot be an array element", s.op)}
}

// cloneValue deep-copies documents and arrays, so values from the
// migration file or the source document are never shared.
func cloneValue(v any) any {
	switch t := v.(type) {
	case bson.D:
		return cloneDoc(t)
	case bson.A:
		a := make(bson.A, len(t))
		for i, x := range t {
			a[i] = cloneValue(x)
		}
		return a
	}
	return v
}

func cloneDoc(d bson.D) bson.D {
	out := make(bson.D, len(d))
	for i, e := range d {
		out[i] = bson.E{Key: e.Key, Value: cloneValue(e.Value)}
	}
	return out
}
