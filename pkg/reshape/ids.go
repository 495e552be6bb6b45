package reshape

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// EpochField is the parent's field under which extract keeps, per array,
// its epoch (rule 4 of the package doc): "<EpochField>.<array>.epoch", an
// ObjectId, and down its record of the children it embedded back (rule
// 8): "<EpochField>.<array>.embedded". Neither is written unless the array
// holds an element without an _id.
const EpochField = "_mongomig"

func epochPath(array string) string    { return EpochField + "." + array + ".epoch" }
func embeddedPath(array string) string { return EpochField + "." + array + ".embedded" }

// Epoch is the extract epoch of parent's array: the ObjectId extract
// stamped on the parent before it derived child _ids from the array, new
// at each guarded update that removed an element without an _id (rule 4
// of the package doc). It is the zero RawValue when the parent has none:
// never moved, or replaced whole by a writer that dropped _mongomig.
// parent must hold the field (read it with the array).
func Epoch(parent bson.Raw, array string) bson.RawValue {
	v := parent.Lookup(splitPath(epochPath(array))...)
	if v.Type == bson.TypeNull {
		return bson.RawValue{}
	}
	return v
}

// ChildID is the _id the child of element elem of the parent whose _id is
// parentID gets without an epoch (rule 4 of the package doc): an element
// with an _id, or one of the first k that keep: {first: k} keeps. earlier
// are the elements before elem in the parent's array, as stored: equal
// elements without an _id are told apart by how many precede them.
func ChildID(parentID any, elem bson.RawValue, earlier []bson.RawValue) bson.D {
	return childID(parentID, elem, earlier, bson.RawValue{})
}

// childID is ChildID at epoch e: a {parent, hash, n} _id gets e (when the
// parent has one), so an element appended after an equal one was moved
// and removed, or written back by a replace that dropped the epoch, gets
// an _id of its own.
func childID(parentID any, elem bson.RawValue, earlier []bson.RawValue, e bson.RawValue) bson.D {
	if doc, ok := elem.DocumentOK(); ok {
		if id, err := doc.LookupErr("_id"); err == nil {
			return bson.D{{Key: "parent", Value: parentID}, {Key: "key", Value: id}}
		}
	}
	n := 0
	for _, x := range earlier {
		if x.Type == elem.Type && bytes.Equal(x.Value, elem.Value) {
			n++
		}
	}
	id := bson.D{{Key: "parent", Value: parentID}, {Key: "hash", Value: elementHash(elem)}, {Key: "n", Value: int32(n)}}
	if e.Type != 0 {
		id = append(id, bson.E{Key: "e", Value: e})
	}
	return id
}

// hasHashID reports whether an element gets a {parent, hash, n} _id (it
// is not a document with an _id).
func hasHashID(elem bson.RawValue) bool {
	if doc, ok := elem.DocumentOK(); ok {
		_, err := doc.LookupErr("_id")
		return err != nil
	}
	return true
}

// idsAt are the child _ids of vals, the parent's array, at epoch e: the
// first `first` (the elements keep: {first} keeps, which never leave the
// array) without an epoch, the others at e.
func idsAt(parentID any, vals []bson.RawValue, e bson.RawValue, first int) []bson.D {
	ids := make([]bson.D, len(vals))
	for i, v := range vals {
		at := e
		if i < first {
			at = bson.RawValue{}
		}
		ids[i] = childID(parentID, v, vals[:i], at)
	}
	return ids
}

// ChildIDs are the child _ids of every element of parent's array, in
// order: what a reader of the new release uses to leave out the embedded
// elements it also found among the children (an element whose child is
// written and whose parent's guarded update is not sent yet is both: rule
// 7 of the package doc). parent must hold its _id, the array and
// [EpochField] (read them together); first is the extract's keep:
// {first: k} (0 for the other keeps). For a parent without an epoch the
// _ids of its elements without an _id (but the kept first k) have no
// "e", which no child extract writes has: none of them is a child yet.
func ChildIDs(parent bson.Raw, array string, first int) ([]bson.D, error) {
	val := parent.Lookup(splitPath(array)...)
	if val.Type == 0 || val.Type == bson.TypeNull {
		return nil, nil
	}
	arr, ok := val.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("%s is not an array", array)
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	return idsAt(parent.Lookup("_id"), vals, Epoch(parent, array), first), nil
}

func elementHash(v bson.RawValue) string {
	h := sha256.New()
	h.Write([]byte{byte(v.Type)})
	h.Write(v.Value)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// child is the document element elem of parent pid becomes: the element's
// fields (without its _id, which is in the child's) and ref, or for an
// element that is not a document, {value: elem}.
func child(id bson.D, ref string, pid any, elem bson.RawValue) (bson.D, error) {
	d := bson.D{{Key: "_id", Value: id}, {Key: ref, Value: pid}}
	doc, ok := elem.DocumentOK()
	if !ok {
		return append(d, bson.E{Key: "value", Value: elem}), nil
	}
	elems, err := doc.Elements()
	if err != nil {
		return nil, err
	}
	for _, e := range elems {
		switch e.Key() {
		case "_id":
		case ref:
			return nil, fmt.Errorf("the element has a field %q, the reference to the parent the child gets", ref)
		default:
			d = append(d, bson.E{Key: e.Key(), Value: e.Value()})
		}
	}
	return d, nil
}
