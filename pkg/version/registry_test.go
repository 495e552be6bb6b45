package version_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

var chainFS = fstest.MapFS{
	"0001_users.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
  orders:
    indexes: {create: [{keys: {userId: 1}}]}
`)},
	"0002_validator_only.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object}}
`)},
	"0003_names.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - func: splitName
      - unset: [legacyId]
`)},
}

func splitName(d bson.D) (bson.D, error) {
	for i, e := range d {
		if e.Key == "name" {
			s, ok := e.Value.(string)
			if !ok {
				return nil, errors.New("name is not a string")
			}
			first, last, _ := strings.Cut(s, " ")
			d[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
		}
	}
	return d, nil
}

func newRegistry(t testing.TB, opts ...version.Option) *version.Registry {
	t.Helper()
	r, err := version.New(chainFS, append([]version.Option{version.WithFunc("splitName", splitName)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ext(t testing.TB, s string) bson.D {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func js(d bson.D) string {
	b, _ := bson.MarshalExtJSON(d, false, false)
	return string(b)
}

func TestCurrentAndVersions(t *testing.T) {
	r := newRegistry(t)
	if r.Current("users") != 3 || r.Current("orders") != 0 || r.Current("unknown") != 0 { // Current only reports
		t.Errorf("Current: users %d orders %d unknown %d", r.Current("users"), r.Current("orders"), r.Current("unknown"))
	}
	if v := r.Versions("users"); len(v) != 3 || v[0] != 0 || v[1] != 1 || v[2] != 3 {
		t.Errorf("Versions(users) = %v, want [0 1 3]", v)
	}
	if c := r.Collections(); len(c) != 1 || c[0] != "users" {
		t.Errorf("Collections = %v", c)
	}
}

func TestUpgradeChain(t *testing.T) {
	r := newRegistry(t)
	cases := []struct{ in, want string }{
		// version 0 (missing): every upgrade.
		{`{"_id": 1, "name": "Ada Lovelace", "email": "a@x", "legacyId": 7}`,
			`{"_id":1,"name":{"first":"Ada","last":"Lovelace"},"contact":{"email":"a@x"},"status":"active","version":3}`},
		// version 1: only migration 3 (2 has no upgrade).
		{`{"_id": 2, "version": 1, "name": "Grace Hopper", "contact": {"email": "g@x"}, "status": "x", "legacyId": 1}`,
			`{"_id":2,"version":3,"name":{"first":"Grace","last":"Hopper"},"contact":{"email":"g@x"},"status":"x"}`},
		// version stored as a double or a long still counts.
		{`{"_id": 3, "version": {"$numberDouble": "1.0"}, "name": "A B"}`, `{"_id":3,"version":3,"name":{"first":"A","last":"B"}}`},
		{`{"_id": 4, "version": null, "name": "A B"}`, `{"_id":4,"version":3,"name":{"first":"A","last":"B"},"status":"active"}`},
	}
	for _, tc := range cases {
		in := ext(t, tc.in)
		before := js(in)
		out, changed, err := r.Upgrade("users", in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !changed || js(out) != tc.want {
			t.Errorf("Upgrade(%s)\n got %s (changed %v)\nwant %s", tc.in, js(out), changed, tc.want)
		}
		if js(in) != before {
			t.Errorf("Upgrade modified its input: %s became %s", before, js(in))
		}
	}
}

func TestUpgradeCurrentIsUntouched(t *testing.T) {
	r := newRegistry(t)
	in := ext(t, `{"_id": 1, "version": 3, "name": "x"}`)
	out, changed, err := r.Upgrade("users", in)
	if err != nil || changed || &out[0] != &in[0] {
		t.Fatalf("current document: changed %v err %v, same slice %v", changed, err, &out[0] == &in[0])
	}
	// A collection without upgrades: version 0 documents are current.
	if _, changed, err := r.Upgrade("orders", ext(t, `{"_id": 1}`)); changed || err != nil {
		t.Errorf("orders: changed %v err %v", changed, err)
	}
}

func TestUpgradeErrors(t *testing.T) {
	r := newRegistry(t)
	_, _, err := r.Upgrade("users", ext(t, `{"_id": 9, "version": 4}`))
	var tooNew *version.TooNewError
	if !errors.As(err, &tooNew) || !strings.Contains(err.Error(), "users document _id=9 is at version 4, newer than the 3 this application knows: the application is older than the data") {
		t.Errorf("too new: %v", err)
	}
	_, _, err = r.Upgrade("users", ext(t, `{"_id": 9, "version": "two"}`))
	var verr *version.VersionError
	if !errors.As(err, &verr) || !strings.Contains(err.Error(), `users document _id=9: field "version" holds "two" (string), not a version number`) {
		t.Errorf("bad version: %v", err)
	}
	// A step that cannot apply names the document, the file and the step.
	oid := bson.NewObjectID()
	_, _, err = r.Upgrade("users", bson.D{{Key: "_id", Value: oid}, {Key: "email", Value: "e"}, {Key: "contact", Value: "oops"}})
	var uerr *version.UpgradeError
	want := "upgrade users document _id=ObjectId(" + oid.Hex() + ") from version 0: 0001_users.yaml step 1 (rename): path \"contact.email\": cannot create field \"email\" in element {contact: a string}"
	if !errors.As(err, &uerr) || err.Error() != want {
		t.Errorf("step error:\n got %v\nwant %s", err, want)
	}
	// A func's own error is wrapped with its name.
	_, _, err = r.Upgrade("users", ext(t, `{"_id": 9, "version": 1, "name": 5}`))
	if err == nil || !strings.Contains(err.Error(), "0003_names.yaml step 1 (func): func splitName: name is not a string") {
		t.Errorf("func error: %v", err)
	}
}

func TestMissingFunc(t *testing.T) {
	_, err := version.New(chainFS)
	if err == nil || !strings.Contains(err.Error(), `0003_names.yaml:4:9: users: func "splitName" is not registered; register it with version.WithFunc("splitName", fn)`) {
		t.Fatalf("New without the func: %v", err)
	}
	r, err := version.New(chainFS, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	// Upgrading to version 1 does not need it...
	if _, err := r.ApplyOne("users", 1, ext(t, `{"email": "e"}`)); err != nil {
		t.Errorf("ApplyOne(1): %v", err)
	}
	// ...the full chain does.
	_, _, err = r.Upgrade("users", ext(t, `{"_id": 1}`))
	if !errors.Is(err, version.ErrFuncNotRegistered) {
		t.Errorf("want ErrFuncNotRegistered, got %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, opt := range []version.Option{
		version.WithField(""), version.WithField("a.b"), version.WithField("$v"), version.WithField("_id"),
		version.WithFunc("f", nil),
	} {
		if _, err := version.New(chainFS, opt); err == nil {
			t.Errorf("option accepted")
		}
	}
	if _, err := version.New(chainFS, version.WithFunc("splitName", splitName), version.WithFunc("splitName", splitName)); err == nil {
		t.Error("duplicate func accepted")
	}
}

func TestCustomVersionField(t *testing.T) {
	r := newRegistry(t, version.WithField("_v"))
	out, _, err := r.Upgrade("users", ext(t, `{"_id": 1, "version": 99, "_v": 1, "name": "A B"}`))
	if err != nil || js(out) != `{"_id":1,"version":99,"_v":3,"name":{"first":"A","last":"B"}}` {
		t.Errorf("got %s, %v", js(out), err)
	}
}

func TestStamp(t *testing.T) {
	r := newRegistry(t)
	in := bson.D{{Key: "name", Value: "x"}}
	if got, err := r.Stamp("users", in); err != nil || js(got) != `{"name":"x","version":3}` {
		t.Errorf("Stamp = %s, %v", js(got), err)
	}
	if got, err := r.Stamp("users", bson.D{{Key: "version", Value: 1}, {Key: "a", Value: 1}}); err != nil || js(got) != `{"version":3,"a":1}` {
		t.Errorf("Stamp over an old version = %s, %v", js(got), err)
	}
	if len(in) != 1 {
		t.Error("Stamp modified its input")
	}
	// A collection a migration names without upgrades is at version 0.
	if got, err := r.Stamp("orders", bson.D{}); err != nil || js(got) != `{"version":0}` {
		t.Errorf("Stamp(orders) = %s, %v", js(got), err)
	}
}

// TestUnknownCollection: A collection no migration names
// is an error everywhere a document is stamped, upgraded or validated (a
// typo would stamp version 0, and the next backfill would upgrade current
// documents again), with a did-you-mean; WithCollections and
// AllowUnknownCollections opt in.
func TestUnknownCollection(t *testing.T) {
	r := newRegistry(t)
	d := bson.D{{Key: "_id", Value: 1}}
	raw, _ := bson.Marshal(d)
	calls := map[string]func(string) error{
		"Stamp":       func(c string) error { _, err := r.Stamp(c, d); return err },
		"Upgrade":     func(c string) error { _, _, err := r.Upgrade(c, d); return err },
		"UpgradeRaw":  func(c string) error { _, _, err := r.UpgradeRaw(c, raw); return err },
		"UpgradeM":    func(c string) error { _, _, err := r.UpgradeM(c, bson.M{"_id": 1}); return err },
		"Validate":    func(c string) error { return r.Validate(c, d) },
		"ValidateRaw": func(c string) error { return r.ValidateRaw(c, raw) },
	}
	for name, call := range calls {
		err := call("usres")
		var uc *version.UnknownCollectionError
		if !errors.Is(err, version.ErrUnknownCollection) || !errors.As(err, &uc) || uc.Suggestion != "users" {
			t.Errorf("%s(usres) = %v, want ErrUnknownCollection suggesting users", name, err)
			continue
		}
		if want := `unknown collection "usres": no migration names it; did you mean "users"? a collection without migrations must be declared with version.WithCollections("usres")`; err.Error() != want {
			t.Errorf("%s(usres):\n got %v\nwant %s", name, err, want)
		}
		if err := call("orders"); err != nil {
			t.Errorf("%s(orders), named by a migration without upgrades: %v", name, err)
		}
	}
	declared := newRegistry(t, version.WithCollections("sessions"))
	if got, err := declared.Stamp("sessions", bson.D{}); err != nil || js(got) != `{"version":0}` {
		t.Errorf("Stamp of a declared collection = %s, %v", js(got), err)
	}
	if _, err := declared.Stamp("sesions", bson.D{}); !errors.Is(err, version.ErrUnknownCollection) || !strings.Contains(err.Error(), `did you mean "sessions"?`) {
		t.Errorf("Stamp of a typo of a declared collection: %v", err)
	}
	open := newRegistry(t, version.AllowUnknownCollections(true))
	if _, changed, err := open.Upgrade("tenant_42", d); err != nil || changed {
		t.Errorf("AllowUnknownCollections: changed %v, %v", changed, err)
	}
	if _, err := version.New(chainFS, version.WithFunc("splitName", splitName), version.WithCollections("")); err == nil {
		t.Error("WithCollections(\"\") accepted")
	}
}

func TestUpgradeRawAndM(t *testing.T) {
	r := newRegistry(t)
	raw, _ := bson.Marshal(ext(t, `{"_id": 1, "version": 1, "name": "A B", "legacyId": 2}`))
	out, changed, err := r.UpgradeRaw("users", raw)
	if err != nil || !changed {
		t.Fatalf("UpgradeRaw: %v %v", changed, err)
	}
	if got := bson.Raw(out).String(); !strings.Contains(got, `"version": {"$numberInt":"3"}`) || strings.Contains(got, "legacyId") {
		t.Errorf("UpgradeRaw = %s", got)
	}
	same, changed, err := r.UpgradeRaw("users", out)
	if err != nil || changed || &same[0] != &out[0] {
		t.Errorf("current raw document: changed %v err %v", changed, err)
	}
	m := bson.M{"_id": 1, "email": "e@x", "name": "A B", "meta": bson.M{"k": 1}}
	um, changed, err := r.UpgradeM("users", m)
	if err != nil || !changed {
		t.Fatalf("UpgradeM: %v", err)
	}
	if um["version"] != int32(3) || um["contact"].(bson.M)["email"] != "e@x" || um["meta"].(bson.M)["k"] != 1 {
		t.Errorf("UpgradeM = %v", um)
	}
	if _, ok := m["contact"]; ok {
		t.Error("UpgradeM modified its input")
	}
}

// TestConcurrentUse runs upgrades from many goroutines (go test -race).
func TestConcurrentUse(t *testing.T) {
	r := newRegistry(t)
	shared := ext(t, `{"_id": 1, "name": "A B", "email": "e", "nested": {"x": [1, 2]}}`)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if _, _, err := r.Upgrade("users", shared); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestValidate(t *testing.T) {
	r := newRegistry(t)
	// 0002 declares users' validator: {bsonType: object}.
	if err := r.Validate("users", ext(t, `{"a": 1}`)); err != nil {
		t.Errorf("valid document: %v", err)
	}
	strict, err := version.New(fstest.MapFS{
		"0001_u.yaml": {Data: []byte("collections:\n  users:\n    validator: {$jsonSchema: {required: [email], properties: {email: {bsonType: string}}}}\n")},
		"0002_u.yaml": {Data: []byte("collections:\n  users:\n    validator: {$jsonSchema: {required: [contact]}}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = strict.Validate("users", ext(t, `{"_id": 5, "email": 1}`))
	var inv *version.InvalidError
	if !errors.As(err, &inv) || inv.From != 2 || err.Error() != "users document _id=5 fails the validator of migration 2: contact: required: is required but missing" {
		t.Errorf("Validate = %v", err)
	}
	raw, _ := bson.Marshal(ext(t, `{"_id": 5, "contact": {}}`))
	if err := strict.ValidateRaw("users", raw); err != nil {
		t.Errorf("ValidateRaw of a valid document: %v", err)
	}
	if err := r.Validate("orders", ext(t, `{}`)); err != nil {
		t.Errorf("a collection without validator: %v", err)
	}
	if err := strict.Validate("orders", ext(t, `{}`)); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("a collection no migration names: %v", err)
	}
}

func newRegistryForFuzz() (*version.Registry, error) {
	return version.New(chainFS, version.WithFunc("splitName", splitName))
}

// A func step may read any field, so a write-back after one guards every
// field as read (DeltaFor's doc): a writer who changed nickname, which the
// upgrade left alone but a func could have used, makes it match nothing.
// Before the guard was precomputed per migration, this case was silently
// skipped (readKeys never reported a func).
func TestDeltaForGuardsEveryFieldAfterAFunc(t *testing.T) {
	r := newRegistry(t)
	before := bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "Ada Lovelace"}, {Key: "nickname", Value: "ada"}, {Key: "version", Value: int32(2)}}
	d := upDelta(t, r, before)
	var nick any
	for _, e := range d.Filter {
		if e.Key == "nickname" {
			nick = e.Value
		}
	}
	want := bson.D{{Key: "$eq", Value: "ada"}, {Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}}
	if !reflect.DeepEqual(nick, want) {
		t.Fatalf("filter %v: nickname guarded as %v, want %v", d.Filter, nick, want)
	}
}
