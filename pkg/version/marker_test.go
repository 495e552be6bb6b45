package version_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestWriteBackLosesToAServerSideStep: the
// application reads a version-0 document; a server-side backfill step
// runs that changes nothing in it but the step marker; the application's
// write-back must then match nothing (it used to win, leaving a current
// document with a marker, so a later migration's first step was skipped).
func TestWriteBackLosesToAServerSideStep(t *testing.T) {
	ctx := context.Background()
	reg := newRegistry(t) // users: 0 -> 1 -> 3 (rename, default; func, unset), see registry_test.go
	coll := sandboxtest.Database(t, "app").Collection("users")
	stored := bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}, {Key: "email", Value: "a@x"}, {Key: "status", Value: "active"}}
	if _, err := coll.InsertOne(ctx, stored); err != nil {
		t.Fatal(err)
	}
	upgraded, changed, err := reg.Upgrade("users", stored)
	if err != nil || !changed {
		t.Fatalf("upgrade: %v %v", changed, err)
	}
	// The server-side step: the default of status finds it present, so it
	// only advances the marker.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	won, err := reg.WriteBack(ctx, coll, stored, upgraded)
	if err != nil {
		t.Fatal(err)
	}
	if won {
		t.Fatal("the write-back erased the server-side step's marker")
	}
}

// serverFS has a collection whose upgrades to 2 and 3 run on the server
// (a rename and a set, then an unset) and whose upgrade to 4 copies, which
// runs in Go.
var serverFS = fstest.MapFS{
	"0002_a.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {a: b}\n      - set: {c: 1}\n")},
	"0003_b.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - unset: [e]\n")},
	"0004_c.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - copy: {b: d}\n")},
}

func serverRegistry(t *testing.T, upTo int) *version.Registry {
	t.Helper()
	r, err := newServerRegistry(upTo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newServerRegistry(upTo int) (*version.Registry, error) {
	fsys := fstest.MapFS{}
	for name, f := range serverFS {
		if int(name[3]-'0') <= upTo {
			fsys[name] = f
		}
	}
	return version.New(fsys)
}

// upgradeAll runs doc through Upgrade, UpgradeRaw and UpgradeM, and
// requires the same outcome from each: the upgraded document's extended
// JSON (field order aside), or the error.
func upgradeAll(t *testing.T, r *version.Registry, doc bson.D) (string, error) {
	t.Helper()
	m, err := upgradeAllM(t, r, doc)
	if err != nil {
		return "", err
	}
	return js(sortedD(m)), nil
}

// upgradeAllM is upgradeAll with the result as a bson.M.
func upgradeAllM(t *testing.T, r *version.Registry, doc bson.D) (bson.M, error) {
	t.Helper()
	out, _, err := r.Upgrade("users", doc)
	raw, _ := bson.Marshal(doc)
	rawOut, _, rawErr := r.UpgradeRaw("users", raw)
	var m bson.M
	if err := bson.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	mOut, _, mErr := r.UpgradeM("users", m)
	if dupKeys(doc) {
		// bson.M cannot hold a repeated key (the driver decoded the last
		// copy into m): only Upgrade and UpgradeRaw can see it.
		if err == nil || rawErr == nil {
			t.Fatalf("%s: a repeated key was accepted: Upgrade %v, UpgradeRaw %v", js(doc), err, rawErr)
		}
		return nil, err
	}
	if repeatedMarker(doc) && err != nil {
		// bson.M holds the last marker only: UpgradeM may trust it, the
		// others must refuse the document alike.
		var me *version.MarkerError
		if !errors.As(err, &me) && !errors.As(err, new(*version.VersionError)) && !errors.As(err, new(*version.TooNewError)) || rawErr == nil || err.Error() != rawErr.Error() {
			t.Fatalf("%s: Upgrade %v, UpgradeRaw %v", js(doc), err, rawErr)
		}
		return nil, err
	}
	if (err == nil) != (rawErr == nil) || (err == nil) != (mErr == nil) {
		t.Fatalf("%s: Upgrade %v, UpgradeRaw %v, UpgradeM %v", js(doc), err, rawErr, mErr)
	}
	if err != nil {
		if err.Error() != rawErr.Error() {
			t.Errorf("%s: Upgrade says %v, UpgradeRaw %v", js(doc), err, rawErr)
		}
		return nil, err
	}
	var fromRaw, fromM bson.M
	_ = bson.Unmarshal(rawOut, &fromRaw)
	b, _ := bson.Marshal(mOut)
	_ = bson.Unmarshal(b, &fromM)
	b, _ = bson.Marshal(out)
	var fromD bson.M
	_ = bson.Unmarshal(b, &fromD)
	if !reflect.DeepEqual(fromD, fromRaw) || !reflect.DeepEqual(fromD, fromM) {
		t.Errorf("%s: Upgrade %v, UpgradeRaw %v, UpgradeM %v", js(doc), fromD, fromRaw, fromM)
	}
	return fromD, nil
}

// dupKeys reports whether the version field appears more than once.
func dupKeys(d bson.D) bool {
	n := 0
	for _, e := range d {
		if e.Key == "version" {
			n++
		}
	}
	return n > 1
}

// repeatedMarker reports whether the step marker appears more than once.
func repeatedMarker(d bson.D) bool {
	n := 0
	for _, e := range d {
		if e.Key == version.MarkerField {
			n++
		}
	}
	return n > 1
}

func sortedD(m bson.M) bson.D {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := bson.D{}
	for _, k := range keys {
		d = append(d, bson.E{Key: k, Value: m[k]})
	}
	return d
}

// TestForgedMarkerIsNotTrusted: a user field named
// _mongomig_step used to be read as backfill progress, so {_mongomig_step:
// 1} on a version-0 document skipped the rename (the result lacked b) and
// {_mongomig_step: 0} was deleted. Anything but the exact marker shape,
// for the document's version, is a *MarkerError naming the _id, on every
// path, and the document is not changed.
func TestForgedMarkerIsNotTrusted(t *testing.T) {
	r := serverRegistry(t, 3)
	plan, ok := r.ServerPlan("users", 0)
	if !ok || len(plan.Units) != 3 {
		t.Fatalf("plan %+v %v", plan, ok)
	}
	other := *plan
	other.From = 1
	for _, m := range []any{
		int32(1), int32(0), int64(2), "1", nil, bson.A{plan.Marker(1)},
		bson.D{{Key: "step", Value: int32(1)}},
		bson.D{{Key: "mongomig", Value: "backfil"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(3)}, {Key: "step", Value: int32(1)}},
		append(plan.Marker(1), bson.E{Key: "extra", Value: 1}),
		bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(3)}, {Key: "step", Value: int32(-1)}},
		other.Marker(1), // for another version
		bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: nil}, {Key: "to", Value: int32(3)}, {Key: "step", Value: int32(1)}},
		bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(1)}, {Key: "step", Value: int32(1)}}, // 1 is no version
		plan.Marker(4), // past the plan's units
	} {
		doc := bson.D{{Key: "_id", Value: 7}, {Key: "a", Value: "x"}, {Key: version.MarkerField, Value: m}}
		_, err := upgradeAll(t, r, doc)
		var me *version.MarkerError
		if !errors.As(err, &me) || me.ID != int32(7) && me.ID != 7 || !strings.Contains(err.Error(), "_id=7") {
			t.Errorf("marker %v: got %v, want a *MarkerError naming _id=7", m, err)
		}
	}
}

// TestMarkerResumes: a document the server-side backfill left after unit
// k is finished from unit k+1 on every path, to the marker's target and
// then on through the Go-only upgrade; an application older than the
// backfill cannot finish it: a TooNewError.
func TestMarkerResumes(t *testing.T) {
	plan, ok := serverRegistry(t, 3).ServerPlan("users", 0) // the backfill's plan: 0 -> 3
	if !ok {
		t.Fatal("no server plan")
	}
	afterRename := bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: "x"}, {Key: "e", Value: 5}, {Key: version.MarkerField, Value: plan.Marker(1)}}
	afterSet := bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: "x"}, {Key: "c", Value: 1}, {Key: "e", Value: 5}, {Key: version.MarkerField, Value: plan.Marker(2)}}
	for _, c := range []struct {
		upTo int // the reading application's migrations
		doc  bson.D
		want string
	}{
		{3, afterRename, `{"_id":1,"b":"x","c":1,"version":3}`},
		{3, afterSet, `{"_id":1,"b":"x","c":1,"version":3}`},
		// A newer application finishes the plan, then runs the copy in Go.
		{4, afterRename, `{"_id":1,"b":"x","c":1,"d":"x","version":4}`},
	} {
		got, err := upgradeAll(t, serverRegistry(t, c.upTo), c.doc)
		if err != nil || got != c.want {
			t.Errorf("up to %d, %s: got %s %v, want %s", c.upTo, js(c.doc), got, err, c.want)
		}
	}
	// An older application, whatever the step: the document is newer
	// than it knows (it used to finish the units it knew and serve the
	// half-new shape).
	done := append(append(bson.D{}, afterSet[:4]...), bson.E{Key: version.MarkerField, Value: plan.Marker(3)})
	for _, d := range []bson.D{afterRename, done} {
		_, err := upgradeAll(t, serverRegistry(t, 2), d)
		var tn *version.TooNewError
		if !errors.As(err, &tn) || tn.Version != 3 || tn.Current != 2 {
			t.Errorf("older application, %s: %v, want a TooNewError for version 3", js(d), err)
		}
	}
}

// TestMarkerPastCurrentIsTooNew: release 42 (files up to 0003) reads an
// order that 0004's server-side plan left partway (version 3, marker to
// 4). Every read path refuses it as too new, UpgradeRaw's fast path
// included: serving it as current let the release's whole-document write
// erase what the plan had moved. A marker that leads
// nowhere past the current version is still left alone.
func TestMarkerPastCurrentIsTooNew(t *testing.T) {
	reg := serverRegistry(t, 2)
	newer, ok := serverRegistry(t, 3).ServerPlan("users", 2)
	if !ok {
		t.Fatal("no server plan from version 2")
	}
	for _, mk := range []bson.D{newer.Marker(0), newer.Marker(1), append(newer.Marker(1), bson.E{Key: "nonce", Value: "ab12"})} {
		doc := bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: int32(2)}, {Key: "b", Value: "x"}, {Key: version.MarkerField, Value: mk}}
		var tn *version.TooNewError
		if _, _, err := reg.Upgrade("users", doc); !errors.As(err, &tn) || tn.Version != 3 {
			t.Errorf("Upgrade %s: %v, want TooNewError", js(doc), err)
		}
		raw, _ := bson.Marshal(doc)
		if _, _, err := reg.UpgradeRaw("users", raw); !errors.As(err, &tn) || tn.Version != 3 {
			t.Errorf("UpgradeRaw %s: %v, want TooNewError", js(doc), err)
		}
		m := bson.M{"_id": 1, "version": int32(2), "b": "x", version.MarkerField: mk}
		if _, _, err := reg.UpgradeM("users", m); !errors.As(err, &tn) {
			t.Errorf("UpgradeM %s: %v, want TooNewError", js(doc), err)
		}
	}
	old, _ := serverRegistry(t, 2).ServerPlan("users", 0)
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: int32(2)}, {Key: version.MarkerField, Value: old.Marker(1)}}
	if _, changed, err := reg.Upgrade("users", doc); err != nil || changed {
		t.Errorf("a stale marker leading to the current version: changed %v, %v", changed, err)
	}
}

// TestMarkerOnCurrentDocumentIsLeftAlone: a marker on a current document
// is never read (nothing can resume from it: a later upgrade checks its
// from), so the document is returned as is, a user's own field included,
// and the current path looks at the version field alone.
func TestMarkerOnCurrentDocumentIsLeftAlone(t *testing.T) {
	reg := newRegistry(t)
	cur := reg.Current("users")
	for _, mk := range []any{int32(0), int32(1), bson.D{{Key: "mine", Value: true}}} {
		doc := bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: int32(cur)}, {Key: version.MarkerField, Value: mk}}
		if out, changed, err := reg.Upgrade("users", doc); err != nil || changed || len(out) != 3 {
			t.Errorf("Upgrade: %v changed %v, %v", out, changed, err)
		}
		raw, _ := bson.Marshal(doc)
		if out, changed, err := reg.UpgradeRaw("users", raw); err != nil || changed || string(out) != string(raw) {
			t.Errorf("UpgradeRaw: changed %v, %v", changed, err)
		}
		m := bson.M{"_id": 1, "version": int32(cur), version.MarkerField: mk}
		if out, changed, err := reg.UpgradeM("users", m); err != nil || changed || out[version.MarkerField] == nil {
			t.Errorf("UpgradeM: %v changed %v, %v", out, changed, err)
		}
	}
}
