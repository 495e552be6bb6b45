package version_test

import (
	"errors"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestDuplicateKeysAStepNames: MongoDB stores a
// document's repeated keys as sent, so {_id: 17, status: "x", status:
// "y"} with `set: {status: active}` used to change the first copy while
// the application (bson.M, a struct) decodes the last. A repeated
// top-level key that a pending step reads or writes is an UpgradeError
// wrapping a DuplicateKeyError on every entry point (Upgrade, UpgradeRaw,
// Downgrade); one no step names, or one only a step already applied
// named, is left alone; a pending func step may read any key.
func TestDuplicateKeysAStepNames(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_status.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - set: {status: active}\n    downgrade:\n      - unset: [status]\n")},
		"0002_flag.yaml":   {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {flag: flags.old}\n")},
		"0003_fn.yaml":     {Data: []byte("collections:\n  orders:\n    upgrade:\n      - func: touch\n")},
	}
	r, err := version.New(fsys, version.WithFunc("touch", func(d bson.D) (bson.D, error) { return d, nil }))
	if err != nil {
		t.Fatal(err)
	}
	dup := func(extra ...bson.E) bson.D {
		return append(bson.D{{Key: "_id", Value: int32(17)}, {Key: "status", Value: "x"}, {Key: "status", Value: "y"}}, extra...)
	}
	cases := []struct {
		name, coll string
		doc        bson.D
		field      string // "" : upgraded
	}{
		{"set of a repeated key", "users", dup(), "status"},
		{"rename from a repeated key", "users", bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: 1}, {Key: "flag", Value: 1}, {Key: "flag", Value: 2}}, "flag"},
		{"a repeated key no pending step names", "users", bson.D{{Key: "_id", Value: 1}, {Key: "note", Value: 1}, {Key: "note", Value: 2}}, ""},
		{"a repeated key only an applied step named", "users", append(dup(), bson.E{Key: "version", Value: 1}), ""},
		{"any repeated key before a func", "orders", bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}, {Key: "x", Value: 2}}, "x"},
	}
	for _, c := range cases {
		raw, _ := bson.Marshal(c.doc)
		_, _, err := r.Upgrade(c.coll, c.doc)
		_, _, rawErr := r.UpgradeRaw(c.coll, raw)
		for entry, e := range map[string]error{"Upgrade": err, "UpgradeRaw": rawErr} {
			var ue *version.UpgradeError
			var de *version.DuplicateKeyError
			switch {
			case c.field == "" && e != nil:
				t.Errorf("%s: %s: %v", c.name, entry, e)
			case c.field != "" && (!errors.As(e, &ue) || !errors.As(e, &de) || de.Field != c.field || de.Count != 2):
				t.Errorf("%s: %s: got %v, want an UpgradeError with a DuplicateKeyError on %q", c.name, entry, e, c.field)
			}
		}
	}
	_, err = r.Downgrade("users", 1, append(dup(), bson.E{Key: "version", Value: 1}))
	var ue *version.UpgradeError
	var de *version.DuplicateKeyError
	if !errors.As(err, &ue) || !ue.Down || !errors.As(err, &de) || de.Field != "status" {
		t.Errorf("Downgrade: got %v, want a downgrade UpgradeError with a DuplicateKeyError on status", err)
	}
}
