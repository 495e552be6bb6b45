package version_test

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestFuncPanicIsTheDocumentsError: a func step whose Go function panics
// (with a value, or a runtime error such as a nil map write) fails that
// document on every entry point with an *UpgradeError naming the
// collection, the _id, the file, the step and the func, as an error the
// function returned would; the input is left as it was, and the next
// document upgrades.
func TestFuncPanicIsTheDocumentsError(t *testing.T) {
	for name, fn := range map[string]version.Func{
		"a value": func(d bson.D) (bson.D, error) {
			if hasKey(d, "legacyId") {
				panic("unexpected shape")
			}
			return splitName(d)
		},
		"a runtime error": func(d bson.D) (bson.D, error) {
			if hasKey(d, "legacyId") {
				var m map[string]int
				m["x"] = 1
			}
			return splitName(d)
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := version.New(chainFS, version.WithFunc("splitName", fn))
			if err != nil {
				t.Fatal(err)
			}
			doc := ext(t, `{"_id": 42, "version": 2, "name": "Ada Lovelace", "legacyId": 7}`)
			before := js(doc)
			raw, _ := bson.Marshal(doc)
			var m bson.M
			if err := bson.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			_, _, errD := r.Upgrade("users", doc)
			_, _, errRaw := r.UpgradeRaw("users", raw)
			_, _, errM := r.UpgradeM("users", m)
			for entry, err := range map[string]error{"Upgrade": errD, "UpgradeRaw": errRaw, "UpgradeM": errM} {
				var ue *version.UpgradeError
				if !errors.As(err, &ue) || ue.Collection != "users" || ue.ID != int32(42) || ue.Op != "func" {
					t.Fatalf("%s: %v; want an *UpgradeError for users _id 42", entry, err)
				}
				for _, want := range []string{"upgrade users document _id=42 from version 2: 0003_names.yaml step 1 (func): func splitName panicked: ", "a bug in the function"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: %q lacks %q", entry, err, want)
					}
				}
			}
			if js(doc) != before {
				t.Errorf("the input changed: %s", js(doc))
			}
			out, changed, err := r.Upgrade("users", ext(t, `{"_id": 43, "version": 2, "name": "Ada Lovelace"}`))
			if err != nil || !changed || js(out) != `{"_id":43,"version":3,"name":{"first":"Ada","last":"Lovelace"}}` {
				t.Errorf("the next document: %s, %v, %v", js(out), changed, err)
			}
		})
	}
}

func hasKey(d bson.D, key string) bool {
	for _, e := range d {
		if e.Key == key {
			return true
		}
	}
	return false
}

// errDial is what a func's own dependency might return.
var errDial = errors.New("dial mongodb://admin:Hunter2Secret@db.example.com/app: refused")

// TestFuncMessagesHideConnectionPasswords: a func's panic or error that
// quotes a connection string becomes the document's failure, which
// backfill and the reports print and CI logs keep: its password is shown
// as ***, and errors.Is still finds the func's error.
func TestFuncMessagesHideConnectionPasswords(t *testing.T) {
	for name, fn := range map[string]version.Func{
		"panic": func(bson.D) (bson.D, error) {
			panic("cannot reach mongodb+srv://admin:Hunter2Secret@cluster0.example.net/app")
		},
		"error": func(bson.D) (bson.D, error) { return nil, errDial },
	} {
		r, err := version.New(chainFS, version.WithFunc("splitName", fn))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.Upgrade("users", ext(t, `{"_id": 42, "version": 2, "name": "Ada Lovelace"}`))
		if err == nil || strings.Contains(err.Error(), "Hunter2Secret") || !strings.Contains(err.Error(), "admin:***@") {
			t.Errorf("%s: %v, want the password shown as ***", name, err)
		}
		if name == "error" && !errors.Is(err, errDial) {
			t.Errorf("error: errors.Is lost the func's error: %v", err)
		}
	}
}
