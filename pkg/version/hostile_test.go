package version_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versiontest"
)

// TestVersionRule: for the lazy path: a
// negative, fractional, array, string, Decimal128 or other version is a
// *VersionError naming the _id on every entry point (a negative version
// used to be upgraded as if it were 0), and VersionOfRaw and ParseVersion
// agree.
func TestVersionRule(t *testing.T) {
	r := serverRegistry(t, 3)
	for i, s := range versiontest.StoredVersions {
		doc := s.Doc(i)
		_, err := upgradeAll(t, r, doc)
		var ve *version.VersionError
		if s.Valid != (err == nil) || !s.Valid && !errors.As(err, &ve) {
			t.Errorf("%s: Upgrade error %v, want valid=%v", s.Name, err, s.Valid)
		}
		v, err := r.VersionOf("users", doc)
		if s.Valid != (err == nil) || s.Valid && v != s.Version {
			t.Errorf("%s: VersionOf %d, %v", s.Name, v, err)
		}
		raw, _ := bson.Marshal(doc)
		if v, ok := r.VersionOfRaw(raw); ok != s.Valid || ok && v != s.Version {
			t.Errorf("%s: VersionOfRaw %d, %v", s.Name, v, ok)
		}
		if v, ok := version.ParseVersion(bson.Raw(raw).Lookup("version")); ok != s.Valid || ok && v != s.Version {
			t.Errorf("%s: ParseVersion %d, %v", s.Name, v, ok)
		}
	}
}

// TestNullIsVersionZero: every form of null a program can hand the
// registry is version 0, as docs/lazy-upgrades.md says (bson.Null{} used
// to be a *VersionError "holds null (Null)", while a Go nil worked), on
// every entry point; the server filters already match null as 0
// (TestVersionFiltersAgreeWithTheRule stores both forms).
func TestNullIsVersionZero(t *testing.T) {
	r := serverRegistry(t, 3)
	want, err := upgradeAll(t, r, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, null := range []any{nil, bson.Null{}} {
		d := bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: "x"}, {Key: "version", Value: null}}
		if v, err := r.VersionOf("users", d); v != 0 || err != nil {
			t.Errorf("VersionOf(%#v) = %d, %v; want 0", null, v, err)
		}
		out, changed, err := r.Upgrade("users", d)
		if got := js(sortedD(dToMTest(out))); err != nil || !changed || got != want {
			t.Errorf("Upgrade with version %#v: %s, %v, %v; want %s", null, got, changed, err, want)
		}
		m := bson.M{"_id": 1, "a": "x", "version": null}
		mOut, changed, err := r.UpgradeM("users", m)
		if got := js(sortedD(mOut)); err != nil || !changed || got != want {
			t.Errorf("UpgradeM with version %#v: %s, %v, %v; want %s", null, got, changed, err, want)
		}
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := r.VersionOfRaw(raw); v != 0 || !ok {
			t.Errorf("VersionOfRaw with version %#v: %d, %v", null, v, ok)
		}
		if _, _, err := r.UpgradeRaw("users", raw); err != nil {
			t.Errorf("UpgradeRaw with version %#v: %v", null, err)
		}
	}
}

// dToMTest turns an upgraded bson.D into the bson.M upgradeAll compares.
func dToMTest(d bson.D) bson.M {
	raw, _ := bson.Marshal(d)
	var m bson.M
	_ = bson.Unmarshal(raw, &m)
	return m
}

// TestVersionErrorNamesTheDoubleLimit: a double at or above 2^53 is
// refused, and the message says what a version may be, that limit
// included (it used to say only "a non-negative whole number", which
// 2^53 is).
func TestVersionErrorNamesTheDoubleLimit(t *testing.T) {
	r := serverRegistry(t, 3)
	_, err := r.VersionOf("users", bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: float64(1 << 53)}})
	var ve *version.VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "below 2^53") {
		t.Fatalf("got %v, want a *VersionError that names the 2^53 limit for doubles", err)
	}
}

// dupVersion is a document whose version field appears twice: current
// first, a stale copy second.
func dupVersion(t *testing.T) bson.Raw {
	t.Helper()
	raw, err := bson.Marshal(bson.D{{Key: "_id", Value: 99}, {Key: "version", Value: int32(3)}, {Key: "a", Value: "x"}, {Key: "version", Value: int32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestDuplicateVersionKeys: the first version key
// used to win (a current document was returned as is, the stale copy
// kept), while the Go driver decodes the last one into bson.M and
// structs. A repeated version field is a *VersionError naming the _id on
// every path, current or not.
func TestDuplicateVersionKeys(t *testing.T) {
	raw := dupVersion(t)
	// What the Go driver does on decode: bson.D keeps both, bson.M and
	// structs keep the last.
	var d bson.D
	var m bson.M
	var s struct {
		Version int32 `bson:"version"`
	}
	if bson.Unmarshal(raw, &d) != nil || bson.Unmarshal(raw, &m) != nil || bson.Unmarshal(raw, &s) != nil {
		t.Fatal("decode")
	}
	if len(d) != 4 || m["version"] != int32(1) || s.Version != 1 {
		t.Fatalf("driver decode: bson.D %v, bson.M %v, struct %v", d, m, s)
	}
	r := serverRegistry(t, 3)
	_, _, errRaw := r.UpgradeRaw("users", raw)
	_, _, errD := r.Upgrade("users", d)
	_, errOf := r.VersionOf("users", d)
	for _, err := range []error{errRaw, errD, errOf} {
		var ve *version.VersionError
		if !errors.As(err, &ve) || ve.Count != 2 || ve.ID != int32(99) {
			t.Errorf("got %v, want a *VersionError for 2 version fields of _id 99", err)
		}
	}
	if _, ok := r.VersionOfRaw(raw); ok {
		t.Error("VersionOfRaw accepted a repeated version field")
	}
}

// TestVersionFiltersAgreeWithTheRule stores every value of versiontest.StoredVersions
// on the sandbox and requires each version filter to match exactly the
// documents the Go rule puts there ({version: 1} used to match
// version: [1, 2], so the server-side backfill upgraded it).
func TestVersionFiltersAgreeWithTheRule(t *testing.T) {
	checkVersionFilters(t, sandboxtest.Database(t, "filters"), false)
}

// TestVersionFiltersAgreeWithTheRuleMongoDB is the same on a real MongoDB,
// with the Decimal128 the sandbox cannot store and a document whose
// version field appears twice.
func TestVersionFiltersAgreeWithTheRuleMongoDB(t *testing.T) {
	checkVersionFilters(t, sandboxtest.MongoDB(t, "mongomig_filters", "TestVersionFiltersAgreeWithTheRule covers the sandbox"), true)
}

// versionMatches are the _ids VersionIs, VersionNot, VersionAtLeast and
// VersionBelow of one version match.
type versionMatches struct{ is, not, atLeast, below map[int32]bool }

func checkVersionFilters(t *testing.T, db *mongo.Database, mongodb bool) {
	ctx := context.Background()
	coll := db.Collection("c")
	r := serverRegistry(t, 3)
	want := map[int32]versiontest.StoredVersion{}
	for i, s := range versiontest.StoredVersions {
		if !s.Sandbox && !mongodb {
			continue
		}
		if _, err := coll.InsertOne(ctx, s.Doc(int32(i))); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		want[int32(i)] = s
	}
	if mongodb {
		// MongoDB stores a repeated field as sent (SERVER-6439).
		if _, err := coll.InsertOne(ctx, dupVersion(t)); err != nil {
			t.Fatal(err)
		}
	}
	matches := func(filter bson.D) map[int32]bool {
		cur, err := coll.Find(ctx, filter)
		if err != nil {
			t.Fatalf("%v: %v", filter, err)
		}
		var docs []struct {
			ID int32 `bson:"_id"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			t.Fatal(err)
		}
		got := map[int32]bool{}
		for _, d := range docs {
			got[d.ID] = true
		}
		return got
	}
	var byVersion []versionMatches
	for v := int64(0); v <= 3; v++ {
		f := versionMatches{matches(r.VersionIs(v)), matches(r.VersionNot(v)), matches(r.VersionAtLeast(v)), matches(r.VersionBelow(v))}
		byVersion = append(byVersion, f)
		for id, s := range want {
			if f.is[id] != (s.Valid && s.Version == v) || f.not[id] == f.is[id] {
				t.Errorf("%s: VersionIs(%d) %v, VersionNot %v", s.Name, v, f.is[id], f.not[id])
			}
			if f.atLeast[id] != (s.Valid && s.Version >= v) || f.below[id] == f.atLeast[id] {
				t.Errorf("%s: VersionAtLeast(%d) %v, VersionBelow %v", s.Name, v, f.atLeast[id], f.below[id])
			}
		}
	}
	invalid := matches(r.VersionInvalid())
	for id, s := range want {
		if invalid[id] != !s.Valid {
			t.Errorf("%s: VersionInvalid %v", s.Name, invalid[id])
		}
	}
	if mongodb {
		t.Run("version twice", func(t *testing.T) {
			checkRepeatedVersion(t, db, byVersion, invalid[99])
		})
	}
}

// checkRepeatedVersion: the document whose version field appears twice
// (3, then 1) is invalid by the Go rule (TestDuplicateVersionKeys), and
// every filter must say so; each filter and its complement always
// disagree. A server whose query matcher reads only the first of repeated
// fields cannot tell such a document from one at version 3 with any
// filter: that is probed ({version: 1} must match it) and the agreement
// with the rule skipped, naming it. MongoDB's matcher is such a one
// (src/mongo/db/matcher/path_internal.cpp getFieldDottedOrArray reads a
// field with BSONObj::getField, the first of that name).
func checkRepeatedVersion(t *testing.T, db *mongo.Database, byVersion []versionMatches, invalid bool) {
	const id = 99
	for v, f := range byVersion {
		if f.not[id] == f.is[id] || f.below[id] == f.atLeast[id] {
			t.Errorf("VersionIs(%d) %v, VersionNot %v, VersionAtLeast %v, VersionBelow %v: a filter and its complement agree", v, f.is[id], f.not[id], f.atLeast[id], f.below[id])
		}
	}
	n, err := db.Collection("c").CountDocuments(context.Background(), bson.D{{Key: "_id", Value: id}, {Key: "version", Value: int32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Skipf("the server's filters read only the first of a repeated field ({version: 1} does not match {version: 3, ..., version: 1}), as MongoDB's do (matcher/path_internal.cpp getFieldDottedOrArray, BSONObj::getField): no version filter can tell this document is invalid; they take it for version 3 (VersionInvalid %v)", invalid)
	}
	for v, f := range byVersion {
		if f.is[id] || f.atLeast[id] {
			t.Errorf("VersionIs(%d) %v, VersionAtLeast %v: want neither, the document is invalid", v, f.is[id], f.atLeast[id])
		}
	}
	if !invalid {
		t.Error("VersionInvalid does not match it")
	}
}
