package reshape

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ChildID is the _id the child of element elem of the parent whose _id is
// parentID gets (rule 4 of the package doc). earlier are the elements
// before elem in the parent's array, as stored: equal elements without an
// _id are told apart by how many precede them.
func ChildID(parentID any, elem bson.RawValue, earlier []bson.RawValue) bson.D {
	if doc, ok := elem.DocumentOK(); ok {
		if id, err := doc.LookupErr("_id"); err == nil {
			return bson.D{{Key: "parent", Value: parentID}, {Key: "key", Value: id}}
		}
	}
	n := 0
	for _, e := range earlier {
		if e.Type == elem.Type && bytes.Equal(e.Value, elem.Value) {
			n++
		}
	}
	return bson.D{{Key: "parent", Value: parentID}, {Key: "hash", Value: elementHash(elem)}, {Key: "n", Value: int32(n)}}
}

// ChildIDs are the child _ids of every element of array, in order: what a
// reader of the new release uses to leave out the embedded elements it
// also found among the children.
func ChildIDs(parentID any, array bson.RawArray) ([]bson.D, error) {
	vals, err := array.Values()
	if err != nil {
		return nil, err
	}
	ids := make([]bson.D, len(vals))
	for i, v := range vals {
		ids[i] = ChildID(parentID, v, vals[:i])
	}
	return ids, nil
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
