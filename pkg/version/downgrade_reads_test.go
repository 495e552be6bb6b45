package version_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// downFS: users 2 copies email to contact.email and back; users 3 joins
// name with a func on the way down, which may read any field.
var downFS = fstest.MapFS{
	"0002_contact.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - copy: {email: contact.email}
    downgrade:
      - copy: {contact.email: email}
`)},
	"0003_names.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - func: splitName
    downgrade:
      - func: joinName
`)},
}

func joinName(d bson.D) (bson.D, error) {
	for i, e := range d {
		if n, ok := e.Value.(bson.D); ok && e.Key == "name" && len(n) == 2 {
			d[i].Value = n[0].Value.(string) + " " + n[1].Value.(string)
		}
	}
	return d, nil
}

func downRegistry(t *testing.T) *version.Registry {
	t.Helper()
	r, err := version.New(downFS, version.WithFunc("splitName", splitName), version.WithFunc("joinName", joinName))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// downDelta downgrades before from version v and returns the downgrade's
// guarded write.
func downDelta(t *testing.T, r *version.Registry, before bson.D, v int64) version.Delta {
	t.Helper()
	after, err := r.Downgrade("users", v, before)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.DowngradeDeltaFor("users", before, after, v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The downgrade of users 2 reads contact and leaves it alone: its write
// guards contact at its value as read (and email, the copy's target,
// which it left alone too), besides what DeltaOf guards. DeltaOf alone
// guards only the version field and the marker.
func TestDowngradeDeltaForGuardsWhatTheDowngradeReads(t *testing.T) {
	r := downRegistry(t)
	before := ext(t, `{"_id": 1, "email": "a@x", "contact": {"email": "a@x"}, "note": "n", "version": 2}`)
	d := downDelta(t, r, before, 2)
	wantFilter := `{"_id":1,"version":{"$eq":2,"$not":{"$type":"array"}},"_mongomig_step":{"$exists":false},"contact":{"$eq":{"email":"a@x"},"$not":{"$type":"array"}},"email":{"$eq":"a@x","$not":{"$type":"array"}}}`
	if got := js(d.Filter); got != wantFilter {
		t.Errorf("filter\n got %s\nwant %s", got, wantFilter)
	}
	if got, want := js(d.Update), `{"$unset":{"version":""}}`; got != want {
		t.Errorf("update %s, want %s", got, want)
	}
	if _, err := r.DowngradeDeltaFor("users", before, before, 4); err == nil || !strings.Contains(err.Error(), "migration 4 declares no downgrade for users") {
		t.Errorf("a version without a downgrade: %v", err)
	}
}

// A func step may read any field, so the downgrade's write guards every
// field as read: nickname, which joinName left alone, included.
func TestDowngradeDeltaForGuardsEveryFieldAfterAFunc(t *testing.T) {
	r := downRegistry(t)
	before := ext(t, `{"_id": 1, "name": {"first": "Ada", "last": "L"}, "nickname": "ada", "version": 3}`)
	d := downDelta(t, r, before, 3)
	wantFilter := `{"_id":1,"name":{"$eq":{"first":"Ada","last":"L"},"$not":{"$type":"array"}},"version":{"$eq":3,"$not":{"$type":"array"}},"_mongomig_step":{"$exists":false},"nickname":{"$eq":"ada","$not":{"$type":"array"}}}`
	if got := js(d.Filter); got != wantFilter {
		t.Errorf("filter\n got %s\nwant %s", got, wantFilter)
	}
}

// TestDowngradeWriteInterleavings applies the downgrade's guarded write on
// the sandbox after a concurrent writer (deterministically, as
// TestWriteBackInterleavings does): a change to a field the downgrade reads
// makes it match nothing, a change to any other field does not.
func TestDowngradeWriteInterleavings(t *testing.T) {
	ctx := context.Background()
	r := downRegistry(t)
	coll := sandboxtest.Database(t, "app").Collection("users")
	for _, tc := range []struct {
		name      string
		writer    bson.D
		wantMatch int64
		wantJSON  string
	}{
		{"no concurrent writer", nil, 1, `{"email":"a@x","contact":{"email":"a@x"}}`},
		{"writer changes a field the downgrade does not read", bson.D{{Key: "$set", Value: bson.D{{Key: "note", Value: "app"}}}}, 1,
			`{"email":"a@x","contact":{"email":"a@x"},"note":"app"}`},
		{"writer changes the copy's source", bson.D{{Key: "$set", Value: bson.D{{Key: "contact.email", Value: "new@x"}}}}, 0,
			`{"email":"a@x","contact":{"email":"new@x"},"version":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := bson.NewObjectID()
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "email", Value: "a@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}}); err != nil {
				t.Fatal(err)
			}
			var read bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&read); err != nil {
				t.Fatal(err)
			}
			down, err := r.Downgrade("users", 2, read)
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.DowngradeDeltaFor("users", read, down, 2)
			if err != nil {
				t.Fatal(err)
			}
			if tc.writer != nil {
				if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, tc.writer); err != nil {
					t.Fatal(err)
				}
			}
			res, err := coll.UpdateOne(ctx, d.Filter, d.Update)
			if err != nil || res.MatchedCount != tc.wantMatch {
				t.Fatalf("write = %+v, %v; want %d matched", res, err, tc.wantMatch)
			}
			var got bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			var rest bson.D
			for _, e := range got {
				if e.Key != "_id" {
					rest = append(rest, e)
				}
			}
			if s := js(rest); s != tc.wantJSON {
				t.Errorf("stored\n got %s\nwant %s", s, tc.wantJSON)
			}
		})
	}
}

// A top-level name a filter cannot name ("a.b" is read as a path, "$x" as
// an operator) is not guarded after a func: its guard would never match.
func TestDowngradeDeltaForSkipsNamesAFilterCannotHold(t *testing.T) {
	r := downRegistry(t)
	before := bson.D{{Key: "_id", Value: int32(1)}, {Key: "a.b", Value: int32(1)}, {Key: "$x", Value: int32(2)}, {Key: "name", Value: bson.D{{Key: "first", Value: "A"}, {Key: "last", Value: "L"}}}, {Key: "version", Value: int32(3)}}
	d := downDelta(t, r, before, 3)
	for _, e := range d.Filter {
		if e.Key == "a.b" || e.Key == "$x" {
			t.Errorf("filter %s guards %q", js(d.Filter), e.Key)
		}
	}
}
