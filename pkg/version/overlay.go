package version

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// overlay is the upgrade of one document in progress, without a working
// copy: the top-level fields the chain's steps name (its keyTable's slots)
// live in the overlay, every other field stays where it is in base, which
// is never modified. Steps read and write slots in O(1); build costs one
// pass over base and materialize one more, writing each field of the
// result once, as a hand-written upgrade does. The rules are those of
// step.applyOps on a bson.D (ApplyOne, Downgrade, resume), which
// TestIndexedUpgradeMatchesScans checks this against.
type overlay struct {
	kt   *keyTable
	base bson.D
	// orig is 1 + the position in base of each slot's field (0: not in
	// base); inPlace whether the field is still there (not removed, not
	// re-added at the end).
	orig    [maxTracked]int32
	inPlace [maxTracked]bool
	has     [maxTracked]bool // the field exists now
	val     [maxTracked]any  // its value
	// added lists the slots appended, in order.
	added  [maxTracked]int8
	nAdded int
	// found lists the slots found in base, in base's order, so that
	// materialize finds them without hashing again.
	found  [maxTracked]int8
	nFound int
}

func (ov *overlay) build(kt *keyTable, base bson.D) {
	ov.kt, ov.base, ov.nAdded, ov.nFound = kt, base, 0, 0
	for s := range kt.names {
		ov.orig[s], ov.inPlace[s], ov.has[s], ov.val[s] = 0, false, false, nil
	}
	for i := range base {
		if s := kt.slot(base[i].Key); s >= 0 && ov.orig[s] == 0 {
			ov.orig[s] = int32(i + 1) // the first of duplicate keys, as index does
			ov.inPlace[s], ov.has[s], ov.val[s] = true, true, base[i].Value
			ov.found[ov.nFound] = int8(s)
			ov.nFound++
		}
	}
}

// put sets slot s's field: in place when it exists, else appended.
func (ov *overlay) put(s int, v any) {
	if !ov.has[s] {
		ov.has[s] = true
		ov.added[ov.nAdded] = int8(s)
		ov.nAdded++
	}
	ov.val[s] = v
}

// drop removes slot s's field.
func (ov *overlay) drop(s int) {
	if !ov.has[s] {
		return
	}
	ov.has[s], ov.inPlace[s], ov.val[s] = false, false, nil
	for i := 0; i < ov.nAdded; i++ {
		if int(ov.added[i]) == s {
			copy(ov.added[i:ov.nAdded], ov.added[i+1:ov.nAdded])
			ov.nAdded--
			break
		}
	}
}

// lookup returns a top-level field's value, tracked or not.
func (ov *overlay) lookup(key string) (any, bool) {
	if s := ov.kt.slot(key); s >= 0 {
		return ov.val[s], ov.has[s]
	}
	return lookupD(ov.base, key)
}

// materialize writes the document the steps made: base's fields in
// order, tracked ones with their value (removed ones left out), then the
// added fields in the order they were added.
func (ov *overlay) materialize() bson.D {
	out := make(bson.D, 0, len(ov.base)+ov.nAdded)
	next := 0 // the next of found
	for i := range ov.base {
		if next < ov.nFound {
			if s := ov.found[next]; int(ov.orig[s]) == i+1 {
				next++
				if ov.inPlace[s] {
					out = append(out, bson.E{Key: ov.base[i].Key, Value: ov.val[s]})
				}
				continue
			}
		}
		out = append(out, ov.base[i])
	}
	for _, s := range ov.added[:ov.nAdded] {
		out = append(out, bson.E{Key: ov.kt.names[s], Value: ov.val[s]})
	}
	return out
}

// applyOverlay runs a declarative step on ov (see applyOps for the rules).
func (s *step) applyOverlay(ov *overlay) error {
	if s.idPath == "" {
		return s.overlayOps(ov)
	}
	before, had := ov.lookup("_id")
	if err := s.overlayOps(ov); err != nil || !had {
		return err
	}
	after, kept := ov.lookup("_id")
	return s.checkID(before, after, kept)
}

func (s *step) overlayOps(ov *overlay) error {
	for i := range s.fields {
		f := &s.fields[i]
		var err error
		switch s.op {
		case migration.OpSet:
			err = ov.set(f.slot, f.segs, cloneValue(f.value), f.path)
		case migration.OpDefault:
			if !ov.has[f.slot] || len(f.segs) > 1 && !existsIn(ov.val[f.slot], f.segs[1:]) {
				err = ov.set(f.slot, f.segs, cloneValue(f.value), f.path)
			}
		case migration.OpUnset:
			ov.unset(f.slot, f.segs)
		case migration.OpRename, migration.OpCopy:
			err = s.moveOverlay(ov, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (ov *overlay) set(s int, segs []string, v any, full string) error {
	switch {
	case len(segs) == 1:
		ov.put(s, v)
	case !ov.has[s]:
		child, err := set(bson.D{}, segs[1:], v, full)
		if err != nil {
			return err
		}
		ov.put(s, child)
	default:
		child, err := setIn(ov.val[s], segs[0], segs[1:], v, full)
		if err != nil {
			return err
		}
		ov.val[s] = child
	}
	return nil
}

func (ov *overlay) unset(s int, segs []string) {
	switch {
	case !ov.has[s]:
	case len(segs) == 1:
		ov.drop(s)
	default:
		if child, changed := unsetIn(ov.val[s], segs[1:]); changed {
			ov.val[s] = child
		}
	}
}

func (s *step) moveOverlay(ov *overlay, f *field) error {
	if !ov.has[f.slot] {
		return nil // a missing source: nothing, whatever the target
	}
	v, found, problem := locateFrom(ov.val[f.slot], f.segs)
	switch {
	case problem != "":
		return s.sourceError(f, problem)
	case !found:
		return nil
	}
	if ov.has[f.toSlot] && crossesArrayFrom(ov.val[f.toSlot], f.toSg) {
		return s.targetError(f)
	}
	if t, exists := ov.target(f.toSlot, f.toSg); exists && !s.overwrites && !sameValue(t, v) {
		return s.occupiedError(f, t)
	}
	if s.op == migration.OpRename {
		ov.unset(f.slot, f.segs)
	} else {
		v = cloneValue(v)
	}
	return ov.set(f.toSlot, f.toSg, v, f.to)
}

// target returns the value at segs (slot s's field and below), if any.
func (ov *overlay) target(s int, segs []string) (any, bool) {
	if !ov.has[s] {
		return nil, false
	}
	if len(segs) == 1 {
		return ov.val[s], true
	}
	if d, ok := ov.val[s].(bson.D); ok {
		return get(d, segs[1:])
	}
	return nil, false
}
