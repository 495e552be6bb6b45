package version

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// UpgradeRaw is [Registry.Upgrade] for raw BSON. A document already at the
// current version costs one scan of its top-level keys (a version field
// that appears twice is an error) and no allocation.
func (r *Registry) UpgradeRaw(coll string, raw bson.Raw) (bson.Raw, bool, error) {
	ch := r.chains[coll]
	if ch == nil {
		if err := r.checkKnown(coll); err != nil {
			return raw, false, err
		}
	}
	if v, ok, marked := rawScan(raw, r.field); ok && v == ch.current() && !marked {
		// A marker on a current document may lead past it (see Upgrade):
		// only a document without one takes this path.
		return raw, false, nil
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return raw, false, fmt.Errorf("decode %s document: %w", coll, err)
	}
	up, changed, err := r.Upgrade(coll, d)
	if err != nil || !changed {
		return raw, false, err
	}
	out, err := bson.Marshal(up)
	if err != nil {
		return raw, false, fmt.Errorf("encode upgraded %s document: %w", coll, err)
	}
	return out, true, nil
}

// VersionOfRaw returns the version of a raw document (0 when the field is
// missing or null); ok is false when the field does not hold a version or
// appears twice, or when raw is not a well-formed sequence of top-level
// elements. It does not allocate.
func (r *Registry) VersionOfRaw(raw bson.Raw) (v int64, ok bool) {
	return rawVersion(raw, r.field)
}

// rawVersion finds the version field among the top-level elements, and
// checks that it appears once, in one pass over the element bytes without
// allocating: per element, the key's end is one bytes.IndexByte, its
// length is compared with the field's before its bytes, and the value is
// skipped by its type's size (rawValueSize). ok is false when the value is
// not a version, the field appears twice, or raw is malformed: a length
// prefix that is not len(raw), no trailing 0, a key without its 0, an
// unknown type, or a value that does not fit in the document. Every index
// is checked against the bytes left before it is used.
func rawVersion(raw []byte, field string) (v int64, ok bool) {
	v, ok, _ = rawScan(raw, field)
	return v, ok
}

// rawScan is rawVersion, and also reports whether a top-level MarkerField
// is among the elements (in the same pass).
func rawScan(raw []byte, field string) (v int64, ok, marked bool) {
	n := len(raw)
	if n < 5 || raw[n-1] != 0 || int64(int32(binary.LittleEndian.Uint32(raw))) != int64(n) {
		return 0, false, false
	}
	elems := raw[4 : n-1]
	found := false
	ok = true
	for i := 0; i < len(elems); {
		t := bsoncore.Type(elems[i])
		keyLen := bytes.IndexByte(elems[i+1:], 0)
		if keyLen < 0 {
			return 0, false, false
		}
		start := i + 1 + keyLen + 1
		size, good := rawValueSize(elems[start:], t)
		if !good {
			return 0, false, false
		}
		if keyLen == len(MarkerField) && string(elems[i+1:i+1+keyLen]) == MarkerField {
			marked = true
		}
		if keyLen == len(field) && string(elems[i+1:i+1+keyLen]) == field {
			if found {
				return 0, false, false
			}
			found = true
			v, _, ok = rawValueVersion(bsoncore.Value{Type: t, Data: elems[start : start+size]})
		}
		i = start + size
	}
	return v, ok, marked
}

// rawValueSize is the size of the value of type t at the start of src,
// and false when the type is unknown, a length prefix is below the
// smallest value of its type, or the value does not fit in src. Sizes are
// those of the BSON specification (bsonspec.org/spec.html): fixed for
// numbers, ObjectId, bool, dates, timestamps and decimals; an int32 length
// prefix for string, JavaScript code and symbol (the bytes after the
// prefix), document and array (the whole), binary (the bytes after the
// prefix and subtype) and code with scope (the whole); regex is two
// cstrings; dbPointer a string and an ObjectId.
func rawValueSize(src []byte, t bsoncore.Type) (int, bool) {
	var size int
	switch t {
	case bsoncore.TypeNull, bsoncore.TypeUndefined, bsoncore.TypeMinKey, bsoncore.TypeMaxKey:
		return 0, true
	case bsoncore.TypeBoolean:
		size = 1
	case bsoncore.TypeInt32:
		size = 4
	case bsoncore.TypeDouble, bsoncore.TypeInt64, bsoncore.TypeDateTime, bsoncore.TypeTimestamp:
		size = 8
	case bsoncore.TypeObjectID:
		size = 12
	case bsoncore.TypeDecimal128:
		size = 16
	case bsoncore.TypeString, bsoncore.TypeJavaScript, bsoncore.TypeSymbol:
		size = prefixed(src, 4, 1)
	case bsoncore.TypeDBPointer:
		size = prefixed(src, 4+12, 1)
	case bsoncore.TypeBinary:
		size = prefixed(src, 4+1, 0)
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
		size = prefixed(src, 0, 5)
	case bsoncore.TypeCodeWithScope:
		// int32 total, string (int32 + at least its 0), document.
		size = prefixed(src, 0, 4+4+1+5)
	case bsoncore.TypeRegex:
		pattern := bytes.IndexByte(src, 0)
		if pattern < 0 {
			return 0, false
		}
		options := bytes.IndexByte(src[pattern+1:], 0)
		if options < 0 {
			return 0, false
		}
		return pattern + 1 + options + 1, true
	default:
		return 0, false
	}
	return size, size >= 0 && size <= len(src)
}

// prefixed is the size of a value that starts with an int32 length l:
// l+extra, or -1 when src is shorter than the prefix or l is below min.
func prefixed(src []byte, extra, min int) int {
	if len(src) < 4 {
		return -1
	}
	l := int(int32(binary.LittleEndian.Uint32(src)))
	if l < min {
		return -1
	}
	return l + extra
}

// rawValueVersion reads a version field's value: present is false for
// null, ok false when it is not a version.
func rawValueVersion(val bsoncore.Value) (v int64, present, ok bool) {
	switch val.Type {
	case bsoncore.TypeInt32:
		return int64(val.Int32()), true, val.Int32() >= 0
	case bsoncore.TypeInt64:
		return val.Int64(), true, val.Int64() >= 0
	case bsoncore.TypeDouble:
		f := val.Double()
		return int64(f), true, f == math.Trunc(f) && f >= 0 && f < maxDouble
	case bsoncore.TypeNull:
		return 0, false, true
	}
	return 0, true, false
}
