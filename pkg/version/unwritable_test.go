package version_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestDeltaRefusesNamesAnUpdateCannotWrite: MongoDB 5.0 stores top-level
// names with a '.' or a leading '$', but $set and $unset read such a name
// as a path ({$set: {"a.b": 2}} writes b inside a) or an operator: a delta
// that wrote one would change another field and leave this one as it was.
// It is refused (the document stays as it is, the backfill counts it),
// naming the field.
func TestDeltaRefusesNamesAnUpdateCannotWrite(t *testing.T) {
	id := bson.E{Key: "_id", Value: int32(1)}
	for _, tc := range []struct {
		name          string
		before, after bson.D
	}{
		{"set a dotted name", bson.D{id, {Key: "a.b", Value: 1}}, bson.D{id, {Key: "a.b", Value: 2}}},
		{"add a dotted name", bson.D{id}, bson.D{id, {Key: "a.b", Value: 2}}},
		{"unset a dotted name", bson.D{id, {Key: "a.b", Value: 1}}, bson.D{id}},
		{"set a $ name", bson.D{id, {Key: "$kind", Value: 1}}, bson.D{id, {Key: "$kind", Value: 2}}},
	} {
		_, err := version.DeltaOf(tc.before, tc.after)
		if !errors.Is(err, version.ErrUnwritableField) || !strings.Contains(err.Error(), "top-level field") {
			t.Errorf("%s: err %v, want ErrUnwritableField naming the field", tc.name, err)
		}
	}
	// Left alone, such a field is no obstacle.
	d, err := version.DeltaOf(bson.D{id, {Key: "a.b", Value: 1}, {Key: "x", Value: 1}}, bson.D{id, {Key: "a.b", Value: 1}, {Key: "x", Value: 2}})
	if err != nil || len(d.Update) != 1 {
		t.Fatalf("a dotted name left alone: %v %v", d, err)
	}
}

// TestDeltaForSkipsReadNamesAFilterCannotHold: after a func step every
// field as read is guarded, except a top-level name with a '.' or a
// leading '$': a filter would read it as a path or an operator, the guard
// would never match, and the write-back would never happen.
func TestDeltaForSkipsReadNamesAFilterCannotHold(t *testing.T) {
	r := newRegistry(t)
	before := bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "Ada Lovelace"}, {Key: "nick.name", Value: "ada"}, {Key: "version", Value: int32(2)}}
	d := upDelta(t, r, before)
	guarded := map[string]bool{}
	for _, e := range d.Filter {
		guarded[e.Key] = true
	}
	if guarded["nick.name"] || !guarded["name"] {
		t.Fatalf("filter %v: want name guarded, nick.name not", d.Filter)
	}
}

// TestDowngradeErrorSaysDowngrade: a downgrade step that fails names
// itself as a downgrade step, once, with the document's _id (down's
// message said "upgrade" and repeated the _id in another form).
func TestDowngradeErrorSaysDowngrade(t *testing.T) {
	fsys := fstest.MapFS{"0001_x.yaml": {Data: []byte("collections:\n  users:\n    upgrade:\n      - rename: {name: full}\n    downgrade:\n      - rename: {full: name.first}\n")}}
	r, err := version.New(fsys)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Downgrade("users", 1, bson.D{{Key: "_id", Value: int32(7)}, {Key: "full", Value: "Ada"}, {Key: "name", Value: "a string"}, {Key: "version", Value: int32(1)}})
	var ue *version.UpgradeError
	if !errors.As(err, &ue) || !ue.Down || !strings.HasPrefix(err.Error(), "downgrade users document _id=7 from version 1: 0001_x.yaml downgrade step 1 (rename):") {
		t.Fatalf("Downgrade: %v", err)
	}
}

// upDelta upgrades before, a users document, and returns the upgrade's
// guarded write-back.
func upDelta(t *testing.T, r *version.Registry, before bson.D) version.Delta {
	t.Helper()
	after, changed, err := r.Upgrade("users", before)
	if err != nil || !changed {
		t.Fatalf("upgrade: %v %v", changed, err)
	}
	d, err := r.DeltaFor("users", before, after)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
