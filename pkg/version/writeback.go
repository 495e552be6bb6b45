package version

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Delta is the guarded update that writes an upgrade back: $set and
// $unset of the top-level fields the upgrade changed, filtered on the _id
// and on the old value of every one of those fields (the version field
// among them; never an array holding it, nor, for a field that held an
// array, an array holding that array: see [Arrays]). It matches only
// while none of them changed since the read,
// so it never erases a concurrent writer's change: a field another writer
// changed makes it match nothing, and fields the upgrade did not touch are
// not written at all.
//
// A filter's guard values may be shared with other deltas' filters: read
// them, never modify them.
type Delta struct {
	Filter bson.D `json:"filter"`
	Update bson.D `json:"update"`
}

// Empty reports whether the upgrade changed nothing.
func (d Delta) Empty() bool { return len(d.Update) == 0 }

// ErrNoID is returned for a document without _id: it cannot be written back.
var ErrNoID = errors.New("document has no _id")

// ErrUnwritableField is returned (wrapped, naming the field) for an
// upgrade or downgrade that sets or removes a top-level field whose name
// holds a '.' or begins with '$' (MongoDB 5.0 stores such names): $set and
// $unset would read the name as a path or an operator and write another
// field. The document is left as it is.
var ErrUnwritableField = errors.New("field name cannot be written by an update")

func unwritable(k string) error {
	return fmt.Errorf("%w: the steps change the top-level field %q, whose name $set and $unset would read as a path or an operator and so write another field; leave it out of the steps, or change it by hand (MongoDB 5.0 and later: an update pipeline with $setField or $unsetField)", ErrUnwritableField, k)
}

// DeltaOf computes the guarded update that turns before (as read) into
// after (as upgraded). Field order changes alone are not written.
// Its guards on arrays are [ExactArrays]'s; [DeltaOfFor] writes them as
// a server needs.
func DeltaOf(before, after bson.D) (Delta, error) {
	return deltaOf(before, after, nil, ExactArrays)
}

// DeltaOfFor is [DeltaOf] with the guards on arrays a says (see
// [ArraysOf]).
func DeltaOfFor(before, after bson.D, a Arrays) (Delta, error) {
	return deltaOf(before, after, nil, a)
}

// deltaOf is DeltaOf whose filter then guards, as read, the fields that
// links (the upgrades that ran) read and that it does not guard yet (see
// DeltaFor).
//
// A delta costs few allocations, as a hand-written one would not: its
// filter, $set and $unset lists and the guards' sub-documents are carved
// from one backing array sized by a first pass, and the guards whose
// value does not depend on the document ($exists: false, $type: null)
// are shared, never modified values.
func deltaOf(before, after bson.D, links []link, arrays Arrays) (Delta, error) {
	id, ok := lookupD(before, "_id")
	if !ok {
		return Delta{}, ErrNoID
	}
	sh, err := shapeOf(before, after, links, arrays)
	if err != nil {
		return Delta{}, err
	}
	nSet, nUnset, same := sh.sets, sh.unsets, sh.same
	// The update (2), the filter (_id, a guard per set, unset and read
	// field, the marker), the $set and $unset lists, the guards' elements.
	b := deltaBuf{free: make(bson.D, 2+(2+nSet+nUnset+sh.reads)+nSet+nUnset+sh.elems), arrays: arrays}
	var update, sets, unsets bson.D
	if nSet > 0 || nUnset > 0 {
		update = b.take(min(nSet, 1) + min(nUnset, 1))
	}
	filter := append(b.take(2+nSet+nUnset+sh.reads), bson.E{Key: "_id", Value: id})
	if nSet > 0 {
		sets = b.take(nSet)
		for i, e := range after {
			if i < 64 && same&(1<<i) != 0 {
				continue
			}
			old, had := lookupD(before, e.Key)
			if i >= 64 && had && sameValue(old, e.Value) {
				continue
			}
			sets = append(sets, e)
			filter = append(filter, b.guard(e.Key, old, had))
		}
	}
	if nUnset > 0 {
		unsets = b.take(nUnset)
		for j, e := range before {
			if !sh.kept(after, j, e.Key) {
				unsets = append(unsets, bson.E{Key: e.Key, Value: ""})
				filter = append(filter, b.guard(e.Key, e.Value, true))
			}
		}
	}
	// The step marker is guarded even when the upgrade left it alone: a
	// server-side backfill step that ran since the read (and changed nothing
	// else we guard) must make this write match nothing, or the document
	// would reach the current version still carrying a marker, and a later
	// migration's first step would be skipped (see MarkerField).
	if _, had := lookupD(before, MarkerField); !had {
		if _, has := lookupD(after, MarkerField); !has {
			filter = append(filter, b.guard(MarkerField, nil, false))
		}
	}
	if len(sets) > 0 {
		update = append(update, bson.E{Key: "$set", Value: sets})
	}
	if len(unsets) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unsets})
	}
	if len(update) > 0 {
		filter = guardReads(&b, filter, before, links)
	}
	return Delta{Filter: filter, Update: update}, nil
}

// guardReads appends to filter the guard of every field links read that
// it does not guard yet (every field of before when a func step ran). A
// top-level name with a '.' or a leading '$' (MongoDB 5.0 stores them) is
// not guarded: a filter would read it as a path or an operator, so its
// guard would never match and the write-back would never happen.
func guardReads(b *deltaBuf, filter, before bson.D, links []link) bson.D {
	guardRead := func(k string) {
		if k == "_id" || !filterable(k) || hasKey(filter, k) {
			return
		}
		old, had := lookupD(before, k)
		filter = append(filter, b.guard(k, old, had))
	}
	all := false
	for i := range links {
		all = all || links[i].readsAll
		for _, k := range links[i].reads {
			guardRead(k)
		}
	}
	if all {
		for _, e := range before {
			guardRead(e.Key)
		}
	}
	return filter
}

// deltaShape is what a first pass over a delta finds: which of the first
// 64 fields of after are unchanged (same) and of before kept (keep), how
// many fields it sets and unsets, how many reads it visits, and how many
// elements its guards need.
type deltaShape struct {
	same, keep                 uint64
	sets, unsets, reads, elems int
}

// kept reports whether after holds key, the name of before's field j.
func (sh *deltaShape) kept(after bson.D, j int, key string) bool {
	if j < 64 {
		return sh.keep&(1<<j) != 0
	}
	_, ok := lookupD(after, key)
	return ok
}

func shapeOf(before, after bson.D, links []link, arrays Arrays) (sh deltaShape, err error) {
	for i, e := range after {
		old, had := lookupD(before, e.Key)
		if had && sameValue(old, e.Value) {
			if i < 64 {
				sh.same |= 1 << i
			}
			continue
		}
		if e.Key == "_id" {
			return sh, errors.New("the upgrade changed _id")
		}
		if !filterable(e.Key) {
			return sh, unwritable(e.Key)
		}
		sh.sets++
		sh.elems += guardElems(old, had, arrays)
	}
	for j, e := range before {
		if _, kept := lookupD(after, e.Key); kept {
			if j < 64 {
				sh.keep |= 1 << j
			}
		} else {
			if !filterable(e.Key) {
				return sh, unwritable(e.Key)
			}
			sh.unsets++
			sh.elems += guardElems(e.Value, true, arrays)
		}
	}
	all := false
	for i := range links {
		all = all || links[i].readsAll
		for _, k := range links[i].reads {
			sh.read(before, after, k, arrays)
		}
	}
	if all {
		for _, e := range before {
			sh.read(before, after, e.Key, arrays)
		}
	}
	return sh, nil
}

// read counts the guard of k, a field an upgrade read, unless the delta
// guards it anyway (it is _id, or set or unset). A field read twice is
// counted twice: the count bounds what guardReads appends.
func (sh *deltaShape) read(before, after bson.D, k string, arrays Arrays) {
	old, had := lookupD(before, k)
	if k == "_id" || !filterable(k) || sh.writes(after, k, old, had) {
		return
	}
	sh.reads++
	sh.elems += guardElems(old, had, arrays)
}

// writes reports whether the delta sets or unsets k (old, had: its value
// as read).
func (sh *deltaShape) writes(after bson.D, k string, old any, had bool) bool {
	i := index(after, k)
	switch {
	case i < 0:
		return had
	case i < 64:
		return sh.same&(1<<i) == 0
	}
	return !had || !sameValue(old, after[i].Value)
}

// deltaBuf hands out the slices of one delta from one backing array; each
// has its own capacity, so appending past it never overwrites another.
// arrays is how its guards on arrays are written.
type deltaBuf struct {
	free   bson.D
	arrays Arrays
}

func (b *deltaBuf) take(n int) bson.D {
	if len(b.free) < n { // never, if deltaShape counted right
		return make(bson.D, 0, n)
	}
	s := b.free[:0:n]
	b.free = b.free[n:]
	return s
}

// The guards that do not depend on the document, shared by every filter:
// never modified.
var (
	absentGuard any = bson.D{{Key: "$exists", Value: false}}
	nullGuard   any = bson.D{{Key: "$type", Value: "null"}, notArray[0]}
)

// guardElems is how many elements of a delta's backing array guard(key,
// old, had) needs.
func guardElems(old any, had bool, arrays Arrays) int {
	if !had || old == nil {
		return 0
	}
	if _, ok := old.(bson.A); ok {
		if arrays == EqualArrays {
			return 0
		}
		return 4 // $eq, $not, $elemMatch, its $eq
	}
	return 2
}

// guard is the filter clause that a field still holds what was read.
// MongoDB matches a scalar or document against the elements of an array
// too ({version: 1} matches version: [1, 2]; see VersionIs), so every
// guard on a value that is not an array excludes arrays: a concurrent
// writer who turned the field into an array holding the old value must
// make the write match nothing. A guard on an array excludes the arrays
// holding it as an element (see [Arrays], b.arrays; {tags: [1, 2]} also
// matches tags: [[1, 2], 3]). Its sub-documents are carved from b.
func (b *deltaBuf) guard(key string, old any, had bool) bson.E {
	switch {
	case !had:
		return bson.E{Key: key, Value: absentGuard}
	case old == nil:
		// {f: null} would also match a missing field.
		return bson.E{Key: key, Value: nullGuard}
	}
	if _, ok := old.(bson.A); ok {
		if b.arrays == EqualArrays {
			return bson.E{Key: key, Value: old}
		}
		eq := append(b.take(1), bson.E{Key: "$eq", Value: old})
		elem := append(b.take(1), bson.E{Key: "$elemMatch", Value: eq})
		return bson.E{Key: key, Value: append(b.take(2), bson.E{Key: "$eq", Value: old}, bson.E{Key: "$not", Value: elem})}
	}
	// $eq compares the value as a value: a document whose first name
	// starts with '$' ({$kind: 1}, allowed below the top level since
	// MongoDB 5.0) is not read as operators, a regular expression is not
	// matched as a pattern.
	return bson.E{Key: key, Value: append(b.take(2), bson.E{Key: "$eq", Value: old}, notArray[0])}
}

// sameValue compares two BSON values exactly (type and order included),
// without encoding the common types.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int32:
		y, ok := b.(int32)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case bson.ObjectID:
		y, ok := b.(bson.ObjectID)
		return ok && x == y
	case bson.DateTime:
		y, ok := b.(bson.DateTime)
		return ok && x == y
	case bson.D:
		y, ok := b.(bson.D)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Key != y[i].Key || !sameValue(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case bson.A:
		y, ok := b.(bson.A)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	ab, err1 := bson.Marshal(bson.D{{Key: "v", Value: a}})
	bb, err2 := bson.Marshal(bson.D{{Key: "v", Value: b}})
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}

// DeltaFor is [DeltaOf] for a document of coll, also guarding every
// top-level field the upgrade's steps name (a rename's or copy's source,
// a default's or unset's path, their targets) that it left alone, at its
// value as read or absent, and every field as read when a func runs
// (only the fields it declared with [Fields], when it did): the
// upgrade was computed from them, so a writer who changed one since the
// read (an email added that a rename should have moved, the source of a
// copy replaced) must make the write-back match nothing.
//
// Its guards on arrays are [ExactArrays]'s; [Registry.DeltaForOn] writes
// them as a server needs.
func (r *Registry) DeltaFor(coll string, before, after bson.D) (Delta, error) {
	return r.DeltaForOn(coll, before, after, ExactArrays)
}

// DeltaForOn is [Registry.DeltaFor] with the guards on arrays a says (see
// [ArraysOf]).
func (r *Registry) DeltaForOn(coll string, before, after bson.D, a Arrays) (Delta, error) {
	ch := r.chains[coll]
	if ch == nil {
		return deltaOf(before, after, nil, a)
	}
	from, _ := r.VersionOf(coll, before)
	i := 0
	for i < len(ch.links) && ch.links[i].version <= from {
		i++
	}
	return deltaOf(before, after, ch.links[i:], a)
}

func hasKey(d bson.D, k string) bool {
	_, ok := lookupD(d, k)
	return ok
}

// WriteBack persists the upgrade of before (a document of coll as read)
// into after with [Registry.DeltaFor]'s guarded update. won is false when the
// document changed since it was read (another writer, or another
// upgrade): nothing was written, and the caller may re-read and retry.
//
// On MongoDB the guarded update is atomic per document. FerretDB v1 does
// not make conditional updates atomic under true concurrency.
//
// Its guards on arrays are those c's server needs ([ArraysOf], read once
// per client).
func (r *Registry) WriteBack(ctx context.Context, c *mongo.Collection, before, after bson.D) (won bool, err error) {
	arrays, err := ArraysOf(ctx, c.Database().Client())
	if err != nil {
		return false, fmt.Errorf("write back %s: %w", c.Name(), err)
	}
	d, err := r.DeltaForOn(c.Name(), before, after, arrays)
	if err != nil {
		return false, err
	}
	if d.Empty() {
		return true, nil
	}
	res, err := c.UpdateOne(ctx, d.Filter, d.Update)
	if err != nil {
		id, _ := lookupD(before, "_id")
		return false, fmt.Errorf("write back %s document %s: %w", c.Name(), idString(id), err)
	}
	return res.MatchedCount == 1, nil
}
