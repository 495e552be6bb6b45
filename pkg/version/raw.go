package version

import (
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
	if v, _, ok := rawVersion(raw, r.field); ok && v == ch.current() {
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
// appears twice. It does not allocate.
func (r *Registry) VersionOfRaw(raw bson.Raw) (v int64, ok bool) {
	v, _, ok = rawVersion(raw, r.field)
	return v, ok
}

// rawVersion finds the version field among the top-level elements, and
// checks that it appears once, in one scan of every key, without
// allocating. ok is false when the value is not a version, or the field
// appears twice.
func rawVersion(raw bson.Raw, field string) (v int64, present, ok bool) {
	if len(raw) < 5 {
		return 0, false, false
	}
	found := false
	ok = true
	rem := raw[4 : len(raw)-1]
	for len(rem) > 0 {
		elem, rest, good := bsoncore.ReadElement(rem)
		if !good {
			return 0, false, false
		}
		rem = rest
		if string(elem.KeyBytes()) == field {
			if found {
				return 0, true, false
			}
			found = true
			v, present, ok = rawValueVersion(elem.Value())
		}
	}
	return v, present, ok
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
