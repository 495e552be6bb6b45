package version_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// overwriteRegistry renames email to contact.email and copies name to
// display; with wide, a third step names 20 more top-level fields, so
// the chain has too many names for an overlay and Upgrade scans (the
// other implementation of the same rules).
func overwriteRegistry(t *testing.T, wide bool) *version.Registry {
	t.Helper()
	steps := "      - rename: {email: contact.email}\n      - copy: {name: display}\n"
	if wide {
		var names []string
		for i := range 20 {
			names = append(names, fmt.Sprintf("f%d", i))
		}
		steps += "      - unset: [" + strings.Join(names, ", ") + "]\n"
	}
	r, err := version.New(fstest.MapFS{"0001_contact.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n" + steps)}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRenameNeverOverwrites: a rename
// or copy onto a target that holds another value is an UpgradeError
// wrapping an OverwriteError on every entry point (Upgrade with and
// without an overlay, UpgradeRaw, UpgradeM, ApplyOne), where MongoDB's
// $rename would replace the value (src/mongo/db/update/rename_node.cpp:
// SetElementNode on the existing element). The current release's
// contact.email, $set on a document still at version 0, used to be
// overwritten by the old email. A target holding the same value is no
// loss: the rename goes on.
func TestRenameNeverOverwrites(t *testing.T) {
	cases := []struct {
		name, doc string
		refused   string // the target path, "" when the upgrade succeeds
		want      string
	}{
		{"rename onto another value", `{"_id": 1, "email": "old@x", "contact": {"email": "new@x"}}`, "contact.email", ""},
		{"rename onto null", `{"_id": 1, "email": "old@x", "contact": {"email": null}}`, "contact.email", ""},
		{"rename onto another type", `{"_id": 1, "email": 5, "contact": {"email": 5.0}}`, "contact.email", ""},
		{"copy onto another value", `{"_id": 1, "name": "Ann", "display": "Annie"}`, "display", ""},
		{"rename onto the same value", `{"_id": 1, "email": "a@x", "contact": {"email": "a@x"}}`, "",
			`{"_id":1,"contact":{"email":"a@x"},"version":1}`},
		{"copy onto the same value", `{"_id": 1, "name": "Ann", "display": "Ann"}`, "",
			`{"_id":1,"name":"Ann","display":"Ann","version":1}`},
		{"rename into a new field", `{"_id": 1, "email": "a@x", "contact": {"phone": "1"}}`, "",
			`{"_id":1,"contact":{"phone":"1","email":"a@x"},"version":1}`},
	}
	for _, wide := range []bool{false, true} {
		r := overwriteRegistry(t, wide)
		for _, c := range cases {
			name := fmt.Sprintf("%s (wide %v)", c.name, wide)
			doc := ext(t, c.doc)
			raw, _ := bson.Marshal(doc)
			var m bson.M
			_ = bson.Unmarshal(raw, &m)
			out, _, err := r.Upgrade("users", doc)
			_, _, rawErr := r.UpgradeRaw("users", raw)
			_, _, mErr := r.UpgradeM("users", m)
			_, oneErr := r.ApplyOne("users", 1, doc)
			for entry, e := range map[string]error{"Upgrade": err, "UpgradeRaw": rawErr, "UpgradeM": mErr, "ApplyOne": oneErr} {
				if c.refused == "" {
					if e != nil {
						t.Errorf("%s: %s: %v", name, entry, e)
					}
					continue
				}
				var ue *version.UpgradeError
				var ow *version.OverwriteError
				if !errors.As(e, &ue) || !errors.As(e, &ow) || ow.To != c.refused || ue.ID != int32(1) {
					t.Errorf("%s: %s: got %v, want an UpgradeError with an OverwriteError on %s", name, entry, e, c.refused)
				} else if strings.Contains(e.Error(), "new@x") || strings.Contains(e.Error(), "Annie") {
					t.Errorf("%s: %s: the error quotes the stored value: %v", name, entry, e)
				}
			}
			if c.refused == "" && err == nil && !wide && js(out) != c.want {
				t.Errorf("%s: got %s, want %s", name, js(out), c.want)
			}
		}
	}
}

// TestDowngradeCopyOverwrites: a downgrade's copy (or rename) replaces the
// target as MongoDB's $rename does: reverting copy: {email: contact.email}
// puts back the contact.email the current release changed, over the old
// email the upgrade kept. (The down tests of pkg/runner, copyBackFS, run
// this through down.)
func TestDowngradeCopyOverwrites(t *testing.T) {
	r, err := version.New(fstest.MapFS{"0001_contact.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - copy: {email: contact.email}\n    downgrade:\n      - copy: {contact.email: email}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: "old@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "new@x"}}}, {Key: "version", Value: int32(1)}}
	down, err := r.Downgrade("users", 1, doc)
	if err != nil {
		t.Fatalf("downgrade: %v", err)
	}
	if v, _ := lookupKey(down, "email"); v != "new@x" {
		t.Errorf("downgraded email = %v, want the current release's new@x: %v", v, down)
	}
}
