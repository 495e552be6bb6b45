package version_test

import (
	"encoding/binary"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/mongomig/mongomig/pkg/version"
)

// referenceVersionOfRaw is the scan VersionOfRaw replaced (issue #13):
// every top-level element read with bsoncore.ReadElement, the key compared
// with KeyBytes, the value read with version.ParseVersion.
func referenceVersionOfRaw(raw []byte) (v int64, ok bool) {
	if len(raw) < 5 {
		return 0, false
	}
	found := false
	ok = true
	rem := raw[4 : len(raw)-1]
	for len(rem) > 0 {
		elem, rest, good := bsoncore.ReadElement(rem)
		if !good {
			return 0, false
		}
		rem = rest
		if string(elem.KeyBytes()) == "version" {
			if found {
				return 0, false
			}
			found = true
			val := elem.Value()
			v, ok = version.ParseVersion(bson.RawValue{Type: bson.Type(val.Type), Value: val.Data})
		}
	}
	return v, ok
}

// checkRawScan holds VersionOfRaw to the reference on data, passed with
// its capacity cut to its length so that a read past the end panics: an
// answer it accepts is the reference's, and a document it refuses that the
// reference accepted is malformed: the driver cannot decode it (the
// reference skips values by bsoncore's sizes, which take a document of
// length 4 or a string of length 0).
func checkRawScan(t *testing.T, r *version.Registry, data []byte) {
	t.Helper()
	data = data[:len(data):len(data)]
	v, ok := r.VersionOfRaw(data)
	rv, rok := referenceVersionOfRaw(data)
	switch {
	case ok && (!rok || v != rv):
		t.Fatalf("VersionOfRaw %d, true; the reference scan %d, %v: % x", v, rv, rok, data)
	case !ok && rok && bson.Unmarshal(data, &bson.D{}) == nil:
		t.Fatalf("VersionOfRaw refused a valid document the reference reads as %d: % x", rv, data)
	case ok && topLevelCount(data, "version") > 1:
		t.Fatalf("a repeated version field was accepted: % x", data)
	}
}

// withHeader is data with its length prefix and trailing 0 made right,
// so that the element scan, not the header check, meets the bytes.
func withHeader(data []byte) []byte {
	doc := make([]byte, 4, len(data)+5)
	doc = append(append(doc, data...), 0)
	binary.LittleEndian.PutUint32(doc, uint32(len(doc)))
	return doc
}

// everyType is one value of every BSON type, each followed in its
// document by the version field: a skip of the wrong size misreads it.
var everyType = []any{
	1.5, "text", bson.D{{Key: "a", Value: int32(1)}}, bson.A{"x", int32(2)},
	bson.Binary{Subtype: 0x80, Data: []byte{1, 2, 3}}, bson.Undefined{}, bson.NewObjectID(), true,
	bson.DateTime(1700000000000), nil, bson.Regex{Pattern: "^a.*", Options: "im"},
	bson.DBPointer{DB: "app.users", Pointer: bson.NewObjectID()}, bson.JavaScript("f()"),
	bson.Symbol("sym"), bson.CodeWithScope{Code: "g(x)", Scope: bson.D{{Key: "x", Value: int32(1)}}},
	int32(7), bson.Timestamp{T: 1, I: 2}, int64(8), bson.NewDecimal128(1, 2), bson.MinKey{}, bson.MaxKey{},
}

// TestVersionOfRawSkipsEveryType: the version field after a value of each
// type is found, and a repeated one after it refused.
func TestVersionOfRawSkipsEveryType(t *testing.T) {
	r, err := newRegistryForFuzz()
	if err != nil {
		t.Fatal(err)
	}
	for _, val := range everyType {
		raw, err := bson.Marshal(bson.D{{Key: "v", Value: val}, {Key: "version", Value: int32(3)}, {Key: "w", Value: val}})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := r.VersionOfRaw(raw); !ok || v != 3 {
			t.Errorf("after %T: VersionOfRaw %d, %v; want 3", val, v, ok)
		}
		dup, _ := bson.Marshal(bson.D{{Key: "version", Value: int32(3)}, {Key: "v", Value: val}, {Key: "version", Value: int32(3)}})
		if _, ok := r.VersionOfRaw(dup); ok {
			t.Errorf("after %T: a repeated version field was accepted", val)
		}
		checkRawScan(t, r, raw)
	}
}

// TestVersionOfRawRefusesMalformed: every truncation of a document
// holding each type (its header made right) is refused or read as the
// reference reads it, and lengths that lie are refused.
func TestVersionOfRawRefusesMalformed(t *testing.T) {
	r, err := newRegistryForFuzz()
	if err != nil {
		t.Fatal(err)
	}
	d := bson.D{}
	for _, val := range everyType {
		d = append(d, bson.E{Key: "k", Value: val})
	}
	raw, _ := bson.Marshal(append(d, bson.E{Key: "version", Value: int32(3)}))
	if v, ok := r.VersionOfRaw(raw); !ok || v != 3 {
		t.Fatalf("VersionOfRaw %d, %v; want 3", v, ok)
	}
	elems := raw[4 : len(raw)-1]
	for cut := range len(elems) {
		checkRawScan(t, r, withHeader(elems[:cut]))
		checkRawScan(t, r, raw[:cut+5])
	}
	version3 := []byte{0x10, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0, 3, 0, 0, 0}
	le := func(n int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(n)) }
	for name, elem := range map[string][]byte{
		"string length 0":          append([]byte{0x02, 'a', 0}, le(0)...),
		"string length -1":         append(append([]byte{0x02, 'a', 0}, le(-1)...), 0),
		"string past the end":      append(append([]byte{0x02, 'a', 0}, le(math.MaxInt32)...), 'x', 0),
		"document length 4":        append([]byte{0x03, 'a', 0}, le(4)...),
		"array length -5":          append(append([]byte{0x04, 'a', 0}, le(-5)...), 0),
		"binary length MaxInt32":   append(append([]byte{0x05, 'a', 0}, le(math.MaxInt32)...), 0),
		"binary without a subtype": append([]byte{0x05, 'a', 0}, le(0)...),
		"dbPointer without its id": append(append([]byte{0x0C, 'a', 0}, le(1)...), 0),
		"code with scope length 9": append(append([]byte{0x0F, 'a', 0}, le(9)...), make([]byte, 5)...),
		"regex with one cstring":   {0x0B, 'a', 0, 'x', 0},
		"unknown type":             {0x20, 'a', 0},
		"type 0":                   {0x00, 'a', 0},
		"key without its 0":        {0x10, 'v', 'e', 'r'},
		"short int32":              {0x10, 'a', 0, 1, 0},
	} {
		doc := withHeader(append(append([]byte{}, version3...), elem...))
		if v, ok := r.VersionOfRaw(doc); ok {
			t.Errorf("%s: accepted as version %d", name, v)
		}
		checkRawScan(t, r, doc)
	}
	for name, doc := range map[string][]byte{
		"length prefix too long":  append(le(int32(len(raw)+1)), raw[4:]...),
		"length prefix too short": append(le(int32(len(raw)-1)), raw[4:]...),
		"no trailing 0":           append(append([]byte{}, raw[:len(raw)-1]...), 1),
		"negative length prefix":  append(le(-1), raw[4:]...),
	} {
		if v, ok := r.VersionOfRaw(doc); ok {
			t.Errorf("%s: accepted as version %d", name, v)
		}
	}
}

// FuzzVersionOfRaw: on any bytes, and on the same bytes as the elements
// of a document with a right header, VersionOfRaw never panics nor reads
// past the end, and agrees with the reference scan (checkRawScan).
func FuzzVersionOfRaw(f *testing.F) {
	r, err := newRegistryForFuzz()
	if err != nil {
		f.Fatal(err)
	}
	for _, val := range everyType {
		raw, _ := bson.Marshal(bson.D{{Key: "v", Value: val}, {Key: "version", Value: int32(3)}})
		f.Add(raw)
		f.Add(raw[4 : len(raw)-1])
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRawScan(t, r, data)
		checkRawScan(t, r, withHeader(data))
	})
}
