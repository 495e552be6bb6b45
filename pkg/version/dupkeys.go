package version

import (
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// DuplicateKeyError is a top-level field that appears more than once in a
// document (MongoDB stores a document as sent, repeated keys included)
// and that an upgrade step reads or writes. A step would read or change
// the first copy while drivers decode another (Go's bson.M and structs
// keep the last), so the upgrade refuses the document instead: an
// [UpgradeError] wraps this error. The version field has its own rule
// ([VersionError]).
type DuplicateKeyError struct {
	Field string
	Count int
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("field %q appears %d times at the top level; a step would change one copy while drivers read another (Go's bson.D keeps all, bson.M and structs the last): replace the document with one that has a single %q", e.Field, e.Count, e.Field)
}

// checkDuplicates refuses doc when a top-level key that a step above
// version from names (a source or a target; any key when a func step
// runs, since it may read anything) appears more than once. One pass over
// doc's keys; no allocation unless a func step is pending.
func (r *Registry) checkDuplicates(coll string, ch *chain, doc bson.D, from int64) error {
	first := 0
	for first < len(ch.links) && ch.links[first].version <= from {
		first++
	}
	pending := ch.links[first:]
	readsAll := false
	for i := range pending {
		readsAll = readsAll || pending[i].readsAll
	}
	key, n := "", 0
	switch {
	case readsAll:
		key, n = anyDuplicate(doc, r.field)
	case ch.keys != nil:
		var count [maxTracked]int
		for i := range doc {
			if s := ch.keys.slot(doc[i].Key); s >= 0 && s != ch.versionSlot {
				if count[s]++; count[s] == 2 && reads(pending, doc[i].Key) && key == "" {
					key = doc[i].Key
				}
			}
		}
		if key != "" {
			n = count[ch.keys.slot(key)]
		}
	default:
		for i := range pending {
			for _, name := range pending[i].reads {
				if c := countKey(doc, name); c > 1 && key == "" {
					key, n = name, c
				}
			}
		}
	}
	if key == "" {
		return nil
	}
	l, stepNo, op := firstReader(pending, key)
	id, _ := lookupD(doc, "_id")
	return &UpgradeError{Collection: coll, ID: id, From: from, Version: l.version, File: l.file, Step: stepNo, Op: op, Err: &DuplicateKeyError{Field: key, Count: n}}
}

// reads reports whether a pending link's steps name the top-level key.
func reads(pending []link, key string) bool {
	for i := range pending {
		if pending[i].readsAll || slices.Contains(pending[i].reads, key) {
			return true
		}
	}
	return false
}

// firstReader is the first pending step that names key (or a func step,
// which may read it), for the error.
func firstReader(pending []link, key string) (*link, int, string) {
	for i := range pending {
		l := &pending[i]
		for j := range l.steps {
			s := &l.steps[j]
			if s.readsAny() || slices.Contains(s.reads, key) {
				return l, j + 1, string(s.op)
			}
			for _, f := range s.fields {
				if f.segs[0] == key || f.toSg != nil && f.toSg[0] == key {
					return l, j + 1, string(s.op)
				}
			}
		}
	}
	return &pending[0], 1, string(pending[0].steps[0].op)
}

// anyDuplicate is the first top-level key of doc (other than the version
// field) that appears again, and how often it appears.
func anyDuplicate(doc bson.D, versionField string) (string, int) {
	seen := make(map[string]bool, len(doc))
	for i := range doc {
		k := doc[i].Key
		if k == versionField {
			continue
		}
		if seen[k] {
			return k, countKey(doc, k)
		}
		seen[k] = true
	}
	return "", 0
}

func countKey(doc bson.D, key string) int {
	n := 0
	for i := range doc {
		if doc[i].Key == key {
			n++
		}
	}
	return n
}

// duplicateDownKeys is checkDuplicates for migration v's downgrade (down:
// the link with the downgrade's steps).
func duplicateDownKeys(coll string, down *link, doc bson.D, v int64) error {
	key, n := "", 0
	if down.downReadsAll {
		key, n = anyDuplicate(doc, "")
	} else {
		for _, name := range down.downReads {
			if c := countKey(doc, name); c > 1 && key == "" {
				key, n = name, c
			}
		}
	}
	if key == "" {
		return nil
	}
	probe := link{version: down.version, file: down.file, steps: down.steps, readsAll: down.downReadsAll, reads: down.downReads}
	_, stepNo, op := firstReader([]link{probe}, key)
	id, _ := lookupD(doc, "_id")
	return &UpgradeError{Collection: coll, ID: id, From: v, Version: v, File: down.file, Step: stepNo, Op: op, Down: true, Err: &DuplicateKeyError{Field: key, Count: n}}
}
