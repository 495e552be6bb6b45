package version_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestVersionFiltersAtTheLimits: around the largest versions (2^31, the
// 2^53 limit on doubles, the largest int64) each version filter matches
// exactly what ParseVersion says of the stored value.
func TestVersionFiltersAtTheLimits(t *testing.T) {
	ctx := context.Background()
	coll := sandboxtest.Database(t, "limits").Collection("c")
	r := serverRegistry(t, 3)
	values := []any{
		int32(math.MaxInt32), int64(math.MaxInt32), float64(math.MaxInt32), int64(math.MaxInt32 + 1),
		float64(1<<53 - 1), int64(1<<53 - 1), float64(1 << 53), int64(1 << 53), int64(1<<53 + 1),
		float64(1<<53 + 2), int64(math.MaxInt64), int64(math.MaxInt64 - 1),
	}
	for i, v := range values {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "version", Value: v}}); err != nil {
			t.Fatalf("%T %v: %v", v, v, err)
		}
	}
	stored := map[int32]bson.RawValue{}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next(ctx) {
		stored[cur.Current.Lookup("_id").Int32()] = cur.Current.Lookup("version")
	}
	matches := func(filter bson.D) map[int32]bool {
		cur, err := coll.Find(ctx, filter)
		if err != nil {
			t.Fatalf("%v: %v", filter, err)
		}
		got := map[int32]bool{}
		for cur.Next(ctx) {
			got[cur.Current.Lookup("_id").Int32()] = true
		}
		return got
	}
	invalid := matches(r.VersionInvalid())
	for _, v := range []int64{math.MaxInt32, math.MaxInt32 + 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, math.MaxInt64 - 1, math.MaxInt64} {
		is, atLeast, below := matches(r.VersionIs(v)), matches(r.VersionAtLeast(v)), matches(r.VersionBelow(v))
		for id, rv := range stored {
			n, ok := version.ParseVersion(rv)
			if is[id] != (ok && n == v) {
				t.Errorf("%s: VersionIs(%d) %v, ParseVersion %d %v", rv, v, is[id], n, ok)
			}
			if atLeast[id] != (ok && n >= v) || below[id] == atLeast[id] {
				t.Errorf("%s: VersionAtLeast(%d) %v, VersionBelow %v, ParseVersion %d %v", rv, v, atLeast[id], below[id], n, ok)
			}
			if invalid[id] == ok {
				t.Errorf("%s: VersionInvalid %v, ParseVersion %v", rv, invalid[id], ok)
			}
		}
	}
}

// TestStampLeavesOneVersionField: a document to write that repeats the
// version field (a bson.D or raw BSON can) is stamped with one, where the
// first was; MongoDB would store both, and every read refuses that
// document (VersionError). Stamp used to set the first and keep the rest.
func TestStampLeavesOneVersionField(t *testing.T) {
	r := serverRegistry(t, 3)
	for _, tc := range []struct{ in, want string }{
		{`{"_id": 1, "version": 1, "a": 1, "version": 0}`, `{"_id":1,"version":3,"a":1}`},
		{`{"_id": 1, "a": 1, "version": 1, "version": 7}`, `{"_id":1,"a":1,"version":3}`},
		{`{"_id": 1, "a": 1}`, `{"_id":1,"a":1,"version":3}`},
		{`{"version": "x", "_id": 1}`, `{"version":3,"_id":1}`},
	} {
		in := ext(t, tc.in)
		keep := js(in)
		out, err := r.Stamp("users", in)
		if err != nil {
			t.Fatal(err)
		}
		if js(out) != tc.want || js(in) != keep {
			t.Errorf("Stamp(%s) = %s, want %s (input now %s)", tc.in, js(out), tc.want, js(in))
		}
		if _, err := r.VersionOf("users", out); err != nil {
			t.Errorf("Stamp(%s) is not readable: %v", tc.in, err)
		}
	}
}

// TestRepeatedMarkerIsNotTrusted: a step marker a document holds twice
// (raw BSON can, MongoDB stores it) is a *MarkerError below the current
// version: MongoDB's filters read the first, bson.M and structs the last,
// and Upgrade trusted the last, so a backfill that had applied one unit
// could have its second skipped. At the current version the marker is
// never read.
func TestRepeatedMarkerIsNotTrusted(t *testing.T) {
	r := serverRegistry(t, 3)
	plan, ok := r.ServerPlan("users", 0)
	if !ok {
		t.Fatal("no server plan")
	}
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: "x"}, {Key: version.MarkerField, Value: plan.Marker(1)}, {Key: version.MarkerField, Value: plan.Marker(2)}}
	_, _, err := r.Upgrade("users", doc)
	raw, _ := bson.Marshal(doc)
	_, _, rawErr := r.UpgradeRaw("users", raw)
	var me *version.MarkerError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "appears 2 times") || rawErr == nil || rawErr.Error() != err.Error() {
		t.Errorf("Upgrade: %v; UpgradeRaw: %v", err, rawErr)
	}
	current := append(bson.D{{Key: "version", Value: int32(3)}}, doc...)
	if out, changed, err := r.Upgrade("users", current); err != nil || changed || len(out) != len(current) {
		t.Errorf("a current document: %v %v %v", out, changed, err)
	}
}
