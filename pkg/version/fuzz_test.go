package version_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzUpgradeRaw feeds arbitrary bytes to the raw-BSON path (the version
// lookup first): never a panic; a result is either an error or a valid
// document at the current version.
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
	} {
		b, _ := bson.Marshal(d)
		f.Add(b)
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, changed, err := r.UpgradeRaw("users", data)
		if err != nil || !changed {
			return
		}
		if verr := bson.Raw(out).Validate(); verr != nil {
			t.Fatalf("upgraded document is not valid BSON: %v", verr)
		}
		v, err := bson.Raw(out).LookupErr("version")
		if err != nil || v.AsInt64() != r.Current("users") {
			t.Fatalf("upgraded document not at the current version: %v", v)
		}
	})
}
