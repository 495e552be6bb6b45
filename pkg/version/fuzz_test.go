package version_test

import (
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versiontest"
)

// FuzzUpgradeRaw feeds arbitrary bytes to the raw-BSON path (the version
// lookup first): never a panic; a result is either an error or a valid
// document with one version field, at the current version, and no step
// marker; a repeated version field is always an error; a document returned
// unchanged is at the current version.
func FuzzUpgradeRaw(f *testing.F) {
	r, err := newRegistryForFuzz()
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range []bson.D{
		{{Key: "_id", Value: 1}, {Key: "name", Value: "A B"}, {Key: "email", Value: "e"}},
		{{Key: "version", Value: int32(3)}},
		{{Key: "version", Value: 2.5}},
		{{Key: "version", Value: "x"}, {Key: "contact", Value: "s"}},
		{{Key: "version", Value: int32(-1)}, {Key: "name", Value: "A B"}},
		{{Key: "version", Value: bson.A{int32(0), int32(3)}}},
		{{Key: "version", Value: bson.NewDecimal128(0x3040000000000000, 3)}},
		{{Key: "version", Value: int32(3)}, {Key: "version", Value: int32(0)}},
		{{Key: "version", Value: int32(0)}, {Key: "name", Value: "A B"}, {Key: "version", Value: int32(3)}},
		{{Key: "name", Value: "A B"}, {Key: version.MarkerField, Value: int32(1)}},
		{{Key: "name", Value: "A B"}, {Key: version.MarkerField, Value: bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(1)}, {Key: "step", Value: int32(1)}}}},
		{{Key: "version", Value: int32(3)}, {Key: version.MarkerField, Value: int32(0)}},
	} {
		b, _ := bson.Marshal(d)
		f.Add(b)
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, changed, err := r.UpgradeRaw("users", data)
		if err == nil && topLevelCount(data, "version") > 1 {
			t.Fatalf("a repeated version field was accepted: %v", bson.Raw(data))
		}
		if err != nil {
			return
		}
		if !changed {
			if v, ok := r.VersionOfRaw(data); !ok || v != r.Current("users") {
				t.Fatalf("returned unchanged at version %d (ok %v)", v, ok)
			}
			return
		}
		if verr := bson.Raw(out).Validate(); verr != nil {
			t.Fatalf("upgraded document is not valid BSON: %v", verr)
		}
		v, err := bson.Raw(out).LookupErr("version")
		if err != nil || v.AsInt64() != r.Current("users") || topLevelCount(out, "version") != 1 {
			t.Fatalf("upgraded document not at the current version once: %v", bson.Raw(out))
		}
		if topLevelCount(out, version.MarkerField) != 0 {
			t.Fatalf("upgraded document keeps a step marker: %v", bson.Raw(out))
		}
	})
}

// topLevelCount counts the top-level keys of raw named key (raw is
// assumed to have been accepted, so well formed up to the keys read).
func topLevelCount(raw []byte, key string) int {
	n := 0
	if len(raw) < 5 {
		return 0
	}
	rem := raw[4 : len(raw)-1]
	for len(rem) > 0 {
		elem, rest, ok := bsoncore.ReadElement(rem)
		if !ok {
			return n
		}
		if elem.Key() == key {
			n++
		}
		rem = rest
	}
	return n
}

// FuzzStoredDocument builds stored documents from a seed: a version value
// from versiontest's hostile table (or a second, repeated version field),
// and a step marker that is missing, forged or a real one for some step
// of some plan. Upgrade, UpgradeRaw and UpgradeM must agree (upgradeAll),
// an invalid version or a repeated field must be an error, and a success
// must leave one version field at the current version and no marker.
func FuzzStoredDocument(f *testing.F) {
	r, err := newServerRegistry(3)
	if err != nil {
		f.Fatal(err)
	}
	plan, _ := r.ServerPlan("users", 0)
	for seed := uint64(0); seed < 80; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
		s := versiontest.StoredVersions[rng.IntN(len(versiontest.StoredVersions))]
		doc := s.Doc(int32(rng.IntN(1000)))
		if rng.IntN(4) == 0 { // field a renamed already, as after unit 1
			doc[1].Key = "b"
		}
		dup := rng.IntN(6) == 0 && !s.Missing
		if dup {
			doc = append(doc, bson.E{Key: "version", Value: int32(rng.IntN(4))})
		}
		markers := []any{nil, int32(1), int32(0), "1", bson.A{plan.Marker(1)}, plan.Marker(rng.IntN(5)),
			bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(rng.IntN(3))}, {Key: "to", Value: int32(rng.IntN(5))}, {Key: "step", Value: int32(rng.IntN(4) - 1)}}}
		// The shapes Go and the server's filters could read differently:
		// keys in another order, numbers of another type, an extra key.
		k := rng.IntN(4)
		real := plan.Marker(k)
		reordered := bson.D{real[3], real[1], real[0], real[2]}
		doubles := bson.D{real[0], {Key: "from", Value: 0.0}, {Key: "to", Value: float64(plan.To)}, {Key: "step", Value: float64(k)}}
		longs := bson.D{real[0], {Key: "from", Value: int64(0)}, {Key: "to", Value: int64(plan.To)}, {Key: "step", Value: int64(k)}}
		extra := append(append(bson.D{}, real...), bson.E{Key: "at", Value: int32(1)})
		markers = append(markers, reordered, doubles, longs, extra, bson.D{real[0], real[1], real[2], {Key: "step", Value: 1.5}})
		mk := markers[rng.IntN(len(markers))]
		if mk != nil {
			doc = append(doc, bson.E{Key: version.MarkerField, Value: mk})
			if rng.IntN(8) == 0 { // a repeated marker: never trusted
				doc = append(doc, bson.E{Key: version.MarkerField, Value: plan.Marker(rng.IntN(4))})
				dup = dup || !(s.Valid && s.Version == r.Current("users"))
			}
		}
		got, err := upgradeAllM(t, r, doc)
		if err != nil {
			return
		}
		if dup || !s.Valid {
			t.Fatalf("%s accepted: %v", js(doc), got)
		}
		if v, _ := got["version"].(int32); int64(v) != r.Current("users") {
			t.Fatalf("%s: upgraded to %v", js(doc), got)
		}
		if _, marked := got[version.MarkerField]; marked && !(s.Version == r.Current("users")) {
			t.Fatalf("%s: upgraded keeping its marker: %v", js(doc), got)
		}
	})
}
