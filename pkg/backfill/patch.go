package backfill

import (
	"bytes"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/mongomig/mongomig/pkg/version"
)

// validateUpgrade validates up, the upgrade of raw (nil: not at hand)
// whose delta is delta, against the collection's current validator, and
// returns scratch for reuse. With raw, it validates the document the
// server will hold after the delta, built by patchRaw: the same fields and
// values as up, without encoding all of up.
func (r *backfiller) validateUpgrade(name string, up bson.D, raw bson.Raw, delta version.Delta, scratch []byte) ([]byte, error) {
	if raw == nil {
		return scratch, r.registry.Validate(name, up)
	}
	patched, err := patchRaw(scratch[:0], raw, delta.Update)
	if err != nil {
		return scratch, r.registry.Validate(name, up)
	}
	return patched, r.registry.ValidateRaw(name, patched)
}

// patchRaw appends to dst the document the server holds once update, a
// version.DeltaOf update ($set and $unset of top-level fields), is applied
// to raw: raw's elements in their order, each set field's new value in its
// place, unset ones left out, then the set fields raw lacked. The backfill
// validates that document instead of encoding the whole upgraded bson.D:
// the elements the upgrade left alone are copied as bytes, and only the
// changed values are encoded.
func patchRaw(dst []byte, raw bson.Raw, update bson.D) ([]byte, error) {
	var sets, unsets bson.D
	for _, op := range update {
		fields, ok := op.Value.(bson.D)
		switch {
		case !ok:
			return dst, fmt.Errorf("patch: %s is %T, not a document", op.Key, op.Value)
		case op.Key == "$set":
			sets = fields
		case op.Key == "$unset":
			unsets = fields
		default:
			return dst, fmt.Errorf("patch: unexpected update operator %s", op.Key)
		}
	}
	idx, dst := bsoncore.AppendDocumentStart(dst)
	var placed uint64 // the first 64 set fields written in place, by index
	rem := raw[4 : len(raw)-1]
	var err error
	for len(rem) > 0 {
		key, elem, rest, ok := readElement(rem)
		if !ok {
			return dst, fmt.Errorf("patch: malformed document")
		}
		rem = rest
		if has(unsets, key) {
			continue
		}
		if i := index(sets, key); i >= 0 {
			if dst, err = appendValue(dst, sets[i].Key, sets[i].Value); err != nil {
				return dst, err
			}
			if i < 64 {
				placed |= 1 << i
			}
			continue
		}
		dst = append(dst, elem...)
	}
	for i, s := range sets {
		if i < 64 && placed&(1<<i) != 0 {
			continue // written in place
		}
		if i >= 64 {
			if _, err := bsoncore.Document(raw).LookupErr(s.Key); err == nil {
				continue // written in place
			}
		}
		if dst, err = appendValue(dst, s.Key, s.Value); err != nil {
			return dst, err
		}
	}
	return bsoncore.AppendDocumentEnd(dst, idx)
}

// readElement reads the first element of elems: its key, its bytes, the
// elements after it. The key is read once (bsoncore.ReadElement then
// KeyBytes would read it twice).
func readElement(elems []byte) (key, elem, rest []byte, ok bool) {
	end := bytes.IndexByte(elems, 0)
	if end < 1 {
		return nil, nil, nil, false
	}
	_, rest, ok = bsoncore.ReadValue(elems[end+1:], bsoncore.Type(elems[0]))
	return elems[1:end], elems[:len(elems)-len(rest)], rest, ok
}

// index is the position of key in d, or -1.
func index(d bson.D, key []byte) int {
	for i, e := range d {
		if e.Key == string(key) {
			return i
		}
	}
	return -1
}

func has(d bson.D, key []byte) bool { return index(d, key) >= 0 }

// appendValue appends the element key: v, encoding the common scalar types
// directly and the rest with the driver.
func appendValue(dst []byte, key string, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return bsoncore.AppendStringElement(dst, key, x), nil
	case int32:
		return bsoncore.AppendInt32Element(dst, key, x), nil
	case int64:
		return bsoncore.AppendInt64Element(dst, key, x), nil
	case float64:
		return bsoncore.AppendDoubleElement(dst, key, x), nil
	case bool:
		return bsoncore.AppendBooleanElement(dst, key, x), nil
	case nil:
		return bsoncore.AppendNullElement(dst, key), nil
	case bson.ObjectID:
		return bsoncore.AppendObjectIDElement(dst, key, x), nil
	case bson.DateTime:
		return bsoncore.AppendDateTimeElement(dst, key, int64(x)), nil
	case bson.D:
		idx, out := bsoncore.AppendDocumentElementStart(dst, key)
		var err error
		for _, e := range x {
			if out, err = appendValue(out, e.Key, e.Value); err != nil {
				return out, err
			}
		}
		return bsoncore.AppendDocumentEnd(out, idx)
	}
	t, data, err := bson.MarshalValue(v)
	if err != nil {
		return dst, fmt.Errorf("encode %s: %w", key, err)
	}
	return bsoncore.AppendValueElement(dst, key, bsoncore.Value{Type: bsoncore.Type(t), Data: data}), nil
}
