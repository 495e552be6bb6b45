package reshape

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// EpochField is the parent's field under which extract keeps, per array,
// its epoch (rule 4 of the package doc): "<EpochField>.<array>.epoch",
// and down its record of the children it embedded back (rule 8):
// "<EpochField>.<array>.embedded". Neither is written unless an element
// without an _id is moved.
const EpochField = "_mongomig"

func epochPath(array string) string    { return EpochField + "." + array + ".epoch" }
func embeddedPath(array string) string { return EpochField + "." + array + ".embedded" }

// Epoch is the extract epoch of parent's array (0 when the parent has
// none): how many guarded updates removed an element without an _id from
// it. parent must hold the field (read it with the array).
func Epoch(parent bson.Raw, array string) int64 {
	if n, ok := parent.Lookup(splitPath(epochPath(array))...).AsInt64OK(); ok {
		return n
	}
	return 0
}

// ChildID is the _id the child of element elem of the parent whose _id is
// parentID gets at epoch 0 (rule 4 of the package doc): before any
// element without an _id was removed from the parent. earlier are the
// elements before elem in the parent's array, as stored: equal elements
// without an _id are told apart by how many precede them.
func ChildID(parentID any, elem bson.RawValue, earlier []bson.RawValue) bson.D {
	return childID(parentID, elem, earlier, 0)
}

// childID is ChildID at epoch e: a {parent, hash, n} _id gets e (when
// not 0), so an element appended after an equal one was moved and removed
// gets an _id of its own.
func childID(parentID any, elem bson.RawValue, earlier []bson.RawValue, e int64) bson.D {
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
	if e != 0 {
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
// first `first` (the elements keep: {first} keeps, moved before any
// removal) at epoch 0, the others at e.
func idsAt(parentID any, vals []bson.RawValue, e int64, first int) []bson.D {
	ids := make([]bson.D, len(vals))
	for i, v := range vals {
		at := e
		if i < first {
			at = 0
		}
		ids[i] = childID(parentID, v, vals[:i], at)
	}
	return ids
}

// ChildIDs are the child _ids of every element of parent's array, in
// order: what a reader of the new release uses to leave out the embedded
// elements it also found among the children. parent must hold its _id,
// the array and [EpochField] (read them together); first is the
// extract's keep: {first: k} (0 for the other keeps).
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
