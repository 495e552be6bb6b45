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
// among them; never an array holding it). It matches only while none of them changed since the read,
// so it never erases a concurrent writer's change: a field another writer
// changed makes it match nothing, and fields the upgrade did not touch are
// not written at all.
type Delta struct {
	Filter bson.D `json:"filter"`
	Update bson.D `json:"update"`
}

// Empty reports whether the upgrade changed nothing.
func (d Delta) Empty() bool { return len(d.Update) == 0 }

// ErrNoID is returned for a document without _id: it cannot be written back.
var ErrNoID = errors.New("document has no _id")

// DeltaOf computes the guarded update that turns before (as read) into
// after (as upgraded). Field order changes alone are not written.
func DeltaOf(before, after bson.D) (Delta, error) {
	id, ok := lookupD(before, "_id")
	if !ok {
		return Delta{}, ErrNoID
	}
	// One allocation each for the filter and the $set/$unset lists: a
	// document has few fields, so lookups are linear scans, not maps.
	filter := make(bson.D, 1, len(after)+len(before)+1)
	filter[0] = bson.E{Key: "_id", Value: id}
	var sets, unsets bson.D
	for _, e := range after {
		old, had := lookupD(before, e.Key)
		if had && sameValue(old, e.Value) {
			continue
		}
		if e.Key == "_id" {
			return Delta{}, errors.New("the upgrade changed _id")
		}
		if sets == nil {
			sets = make(bson.D, 0, len(after))
		}
		sets = append(sets, e)
		filter = append(filter, guard(e.Key, old, had))
	}
	for _, e := range before {
		if _, kept := lookupD(after, e.Key); !kept {
			if unsets == nil {
				unsets = make(bson.D, 0, len(before))
			}
			unsets = append(unsets, bson.E{Key: e.Key, Value: ""})
			filter = append(filter, guard(e.Key, e.Value, true))
		}
	}
	// The step marker is guarded even when the upgrade left it alone: a
	// server-side backfill step that ran since the read (and changed nothing
	// else we guard) must make this write match nothing, or the document
	// would reach the current version still carrying a marker, and a later
	// migration's first step would be skipped (see MarkerField).
	if _, had := lookupD(before, MarkerField); !had {
		if _, has := lookupD(after, MarkerField); !has {
			filter = append(filter, guard(MarkerField, nil, false))
		}
	}
	var update bson.D
	if len(sets) > 0 {
		update = append(update, bson.E{Key: "$set", Value: sets})
	}
	if len(unsets) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unsets})
	}
	return Delta{Filter: filter, Update: update}, nil
}

// guard is the filter clause that a field still holds what was read.
// MongoDB matches a scalar or document against the elements of an array
// too ({version: 1} matches version: [1, 2]; see VersionIs), so every
// guard on a value that is not an array excludes arrays: a concurrent
// writer who turned the field into an array holding the old value must
// make the write match nothing.
func guard(key string, old any, had bool) bson.E {
	switch {
	case !had:
		return bson.E{Key: key, Value: bson.D{{Key: "$exists", Value: false}}}
	case old == nil:
		// {f: null} would also match a missing field.
		return bson.E{Key: key, Value: bson.D{{Key: "$type", Value: "null"}, notArray[0]}}
	}
	if _, ok := old.(bson.A); ok {
		return bson.E{Key: key, Value: old}
	}
	// $eq compares the value as a value: a document whose first name
	// starts with '$' ({$kind: 1}, allowed below the top level since
	// MongoDB 5.0) is not read as operators, a regular expression is not
	// matched as a pattern.
	return bson.E{Key: key, Value: bson.D{{Key: "$eq", Value: old}, notArray[0]}}
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
// value as read or absent, and every field as read when a func runs: the
// upgrade was computed from them, so a writer who changed one since the
// read (an email added that a rename should have moved, the source of a
// copy replaced) must make the write-back match nothing.
func (r *Registry) DeltaFor(coll string, before, after bson.D) (Delta, error) {
	d, err := DeltaOf(before, after)
	if err != nil || d.Empty() {
		return d, err
	}
	from, _ := r.VersionOf(coll, before)
	guardRead := func(k string) {
		if k == "_id" || hasKey(d.Filter, k) {
			return
		}
		old, had := lookupD(before, k)
		d.Filter = append(d.Filter, guard(k, old, had))
	}
	all := false
	if ch := r.chains[coll]; ch != nil {
		for i := range ch.links {
			if l := &ch.links[i]; l.version > from {
				all = all || l.readsAll
				for _, k := range l.reads {
					guardRead(k)
				}
			}
		}
	}
	if all {
		for _, e := range before {
			guardRead(e.Key)
		}
	}
	return d, nil
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
func (r *Registry) WriteBack(ctx context.Context, c *mongo.Collection, before, after bson.D) (won bool, err error) {
	d, err := r.DeltaFor(c.Name(), before, after)
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
