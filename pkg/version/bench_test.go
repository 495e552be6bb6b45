package version_test

import (
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// Benchmarks come in pairs, X/mongomig and X/baseline, measured in the same
// run; `make bench` prints their ratio (see docs/performance.md).

func benchDoc(version any) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "name", Value: "Ada Lovelace"},
		{Key: "email", Value: "ada@example.com"},
		{Key: "legacyId", Value: int32(17)},
		{Key: "createdAt", Value: bson.DateTime(1700000000000)},
		{Key: "tags", Value: bson.A{"a", "b", "c"}},
		{Key: "address", Value: bson.D{{Key: "city", Value: "London"}, {Key: "zip", Value: "N1"}}},
		{Key: "score", Value: 4.5},
		{Key: "active", Value: true},
		{Key: "visits", Value: int64(1234)},
	}
	if version != nil {
		d = append(d, bson.E{Key: "version", Value: version})
	}
	return d
}

var (
	oneStepFS = fstest.MapFS{"0001_a.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
`)}}
	fiveStepFS = fstest.MapFS{"0001_a.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
      - unset: [legacyId]
      - set: {plan: free}
      - copy: {address.city: city}
`)}}
)

func mustRegistry(b *testing.B, fs fstest.MapFS) *version.Registry {
	r, err := version.New(fs)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

var (
	sink    any
	rawSink bson.Raw
	docSink bson.D
)

// BenchmarkCurrentRaw: an already-current raw document costs one lookup;
// the baseline is the bare bson.Raw field lookup.
func BenchmarkCurrentRaw(b *testing.B) {
	r := mustRegistry(b, fiveStepFS)
	raw, _ := bson.Marshal(benchDoc(int32(1)))
	b.Run("mongomig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, _, err := r.UpgradeRaw("users", raw)
			if err != nil {
				b.Fatal(err)
			}
			rawSink = out
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = bson.Raw(raw).Lookup("version").Type
		}
	})
}

// BenchmarkCurrentD: an already-current bson.D (no baseline: nothing to do).
func BenchmarkCurrentD(b *testing.B) {
	r := mustRegistry(b, fiveStepFS)
	d := benchDoc(int32(1))
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := r.Upgrade("users", d)
		if err != nil {
			b.Fatal(err)
		}
		docSink = out
	}
}

// benchUpgrade compares the registry with the same transformation
// hand-written against bson.D, with the same guarantee (the input is not
// modified).
func benchUpgrade(b *testing.B, fs fstest.MapFS, hand func(bson.D) bson.D) {
	r := mustRegistry(b, fs)
	d := benchDoc(nil)
	b.Run("mongomig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, _, err := r.Upgrade("users", d)
			if err != nil {
				b.Fatal(err)
			}
			docSink = out
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			docSink = hand(d)
		}
	})
}

func BenchmarkUpgrade1Step(b *testing.B)  { benchUpgrade(b, oneStepFS, handRename) }
func BenchmarkUpgrade5Steps(b *testing.B) { benchUpgrade(b, fiveStepFS, hand5) }

func handRename(d bson.D) bson.D {
	out := make(bson.D, 0, len(d)+1)
	var email any
	found := false
	for _, e := range d {
		if e.Key == "email" {
			email, found = e.Value, true
			continue
		}
		out = append(out, e)
	}
	if found {
		out = append(out, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}})
	}
	return append(out, bson.E{Key: "version", Value: int32(1)})
}

func hand5(d bson.D) bson.D {
	out := make(bson.D, 0, len(d)+4)
	var email, city any
	hasEmail, hasStatus, hasPlan, hasCity := false, false, false, false
	for _, e := range d {
		switch e.Key {
		case "email":
			email, hasEmail = e.Value, true
			continue
		case "legacyId":
			continue
		case "status":
			hasStatus = true
		case "plan":
			hasPlan = true
		case "address":
			if a, ok := e.Value.(bson.D); ok {
				for _, x := range a {
					if x.Key == "city" {
						city, hasCity = x.Value, true
					}
				}
			}
		}
		out = append(out, e)
	}
	if hasEmail {
		out = append(out, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}})
	}
	if !hasStatus {
		out = append(out, bson.E{Key: "status", Value: "active"})
	}
	if !hasPlan {
		out = append(out, bson.E{Key: "plan", Value: "free"})
	}
	if hasCity {
		out = append(out, bson.E{Key: "city", Value: city})
	}
	return append(out, bson.E{Key: "version", Value: int32(1)})
}

// TestBaselinesMatch keeps the hand-written baselines honest: they must
// produce exactly what the registry produces.
func TestBaselinesMatch(t *testing.T) {
	for _, tc := range []struct {
		fs   fstest.MapFS
		hand func(bson.D) bson.D
	}{{oneStepFS, handRename}, {fiveStepFS, hand5}} {
		r, err := version.New(tc.fs)
		if err != nil {
			t.Fatal(err)
		}
		d := benchDoc(nil)
		got, _, err := r.Upgrade("users", d)
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.hand(d); js(got) != js(want) {
			t.Errorf("registry %s\nbaseline %s", js(got), js(want))
		}
	}
}
