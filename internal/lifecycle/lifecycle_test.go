package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

func raw(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLifecycleHeldOnServer: MongoDB stores a capped collection's "no
// max" as 2^31-1 (collection_options.cpp, adjustCappedMaxDocs); size and
// max read as any number type.
func TestLifecycleHeldOnServer(t *testing.T) {
	h := HeldOnServer(raw(t, bson.D{{Key: "capped", Value: true}, {Key: "size", Value: 4096.0}, {Key: "max", Value: int32(0x7fffffff)}}))
	if !h.Capped || h.Size != 4096 || h.Max != 0 {
		t.Fatalf("held %+v, want capped size 4096 and no max", h)
	}
	h = HeldOnServer(raw(t, bson.D{{Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "hours"}}}, {Key: "expireAfterSeconds", Value: int64(60)}}))
	if h.TS == nil || h.TS.TimeField != "t" || h.TS.Granularity != "hours" || h.Expire == nil || *h.Expire != 60 {
		t.Fatalf("held %+v", h)
	}
}

// TestLifecycleOptionsRefused: what MongoDB sets only at create is
// refused on an existing collection, naming where it exists.
func TestLifecycleOptionsRefused(t *testing.T) {
	o := &migration.CollectionOptions{Capped: &migration.Capped{Size: 4096}}
	if got := OptionsRefused("events", o, Held{}, true); !strings.HasPrefix(got, "the server's events exists and is not capped") {
		t.Fatalf("refused %q", got)
	}
	if got := OptionsRefused("events", o, Held{}, false); !strings.HasPrefix(got, "the collection exists and is not capped") {
		t.Fatalf("refused %q", got)
	}
	if got := OptionsRefused("events", o, Held{Capped: true}, true); got != "" {
		t.Fatalf("a capped collection refused: %q", got)
	}
	c := &migration.CollectionOptions{Collation: bson.D{{Key: "locale", Value: "fr"}}}
	if got := OptionsRefused("c", c, Held{Collation: bson.D{{Key: "locale", Value: "en"}}}, true); !strings.Contains(got, `another default collation ({"locale":"en"})`) {
		t.Fatalf("refused %q", got)
	}
}

// TestLifecycleOptionChanges: a granularity is only made coarser
// (src/mongo/db/timeseries/timeseries_options.cpp), an unset one being
// seconds; a capped resize keeps cappedMax when one is held.
func TestLifecycleOptionChanges(t *testing.T) {
	ts := &migration.CollectionOptions{Timeseries: &migration.Timeseries{TimeField: "t", Granularity: "seconds"}}
	ch := OptionChanges(ts, Held{TS: &migration.Timeseries{TimeField: "t", Granularity: "hours"}})
	if len(ch) != 1 || !strings.HasPrefix(ch[0].Refused, "the granularity is hours") {
		t.Fatalf("changes %+v", ch)
	}
	ts.Timeseries.Granularity = "minutes"
	ch = OptionChanges(ts, Held{TS: &migration.Timeseries{TimeField: "t"}})
	if len(ch) != 1 || ch[0].Refused != "" || ch[0].Features[0] != probe.FeatureTimeseriesModify {
		t.Fatalf("changes %+v", ch)
	}
	capped := &migration.CollectionOptions{Capped: &migration.Capped{Size: 8192}}
	ch = OptionChanges(capped, Held{Capped: true, Size: migration.CappedSize(4096), Max: 10})
	want := bson.D{{Key: "cappedSize", Value: int64(8192)}, {Key: "cappedMax", Value: int64(0)}}
	if len(ch) != 1 || BSONText(ch[0].Fields) != BSONText(want) {
		t.Fatalf("changes %+v, want %v", ch, want)
	}
	if ch := OptionChanges(capped, Held{Capped: true, Size: migration.CappedSize(8192)}); len(ch) != 0 {
		t.Fatalf("changes %+v for what is held", ch)
	}
}

// TestLifecycleReason: Refused wins; the probe runs only for features.
func TestLifecycleReason(t *testing.T) {
	calls := 0
	caps := func() (*probe.LifecycleSupport, error) {
		calls++
		return &probe.LifecycleSupport{Features: map[string]probe.Capability{probe.FeatureCapped: {Available: true}}}, nil
	}
	if got, _ := Reason("no", []string{probe.FeatureCapped}, caps); got != "no" || calls != 0 {
		t.Fatalf("reason %q, %d probes", got, calls)
	}
	if got, _ := Reason("", nil, caps); got != "" || calls != 0 {
		t.Fatalf("reason %q, %d probes", got, calls)
	}
	if got, _ := Reason("", []string{probe.FeatureCapped, probe.FeatureClustered}, caps); got != "the server lacks "+probe.FeatureClustered+": "+probe.FeatureClustered+" was not probed" {
		t.Fatalf("reason %q", got)
	}
}

// TestValidationSettingsProbeOnlyWhenDeclared: no errorAndLog or
// constraint declared, no probe. Where the server has constraint it is
// refused only on a collection whose documents carry no version (no
// validator window closes there: constraint.go) and on a family.
func TestValidationSettingsProbeOnlyWhenDeclared(t *testing.T) {
	m := &migration.Migration{File: "0001_a.yaml", Collections: []*migration.Collection{{Name: "a", ValidationAction: migration.ActionError}}}
	boom := func() (*probe.ValidationSettings, error) { return nil, errors.New("probed") }
	unversioned := func(string) bool { return false }
	if out, err := UnsupportedSettings([]*migration.Migration{m}, boom, unversioned); err != nil || len(out) != 0 {
		t.Fatalf("settings %v, %v", out, err)
	}
	m.Collections[0].ValidationLevel = migration.LevelConstraint
	if _, err := UnsupportedSettings([]*migration.Migration{m}, boom, unversioned); err == nil {
		t.Fatal("constraint declared, the server not probed")
	}
	all := func() (*probe.ValidationSettings, error) {
		return &probe.ValidationSettings{ErrorAndLog: probe.Capability{Available: true}, Constraint: probe.Capability{Available: true}}, nil
	}
	out, err := UnsupportedSettings([]*migration.Migration{m}, all, unversioned)
	if err != nil || len(out) != 1 || out[0].Key != "validationLevel" || !strings.Contains(out[0].Reason, "no migration declares an upgrade for a") {
		t.Fatalf("settings %+v, %v", out, err)
	}
	if out, err := UnsupportedSettings([]*migration.Migration{m}, all, func(string) bool { return true }); err != nil || len(out) != 0 {
		t.Fatalf("constraint on a versioned collection of a server that has it: %+v, %v", out, err)
	}
	none := func() (*probe.ValidationSettings, error) {
		return &probe.ValidationSettings{Constraint: probe.Capability{Reason: "collMod prepareConstraintValidationLevel: true: unknown field"}}, nil
	}
	out, err = UnsupportedSettings([]*migration.Migration{m}, none, func(string) bool { return true })
	if err != nil || len(out) != 1 || !strings.HasPrefix(out[0].Reason, "the server does not have it (MongoDB 9.0 added it): collMod prepareConstraintValidationLevel") {
		t.Fatalf("settings %+v, %v", out, err)
	}
}

// TestLifecycleHeldAfter: what a later migration of the same run finds
// once OptionChanges are made; a finer granularity (refused) is left.
func TestLifecycleHeldAfter(t *testing.T) {
	yes, ttl := true, int64(60)
	h := Held{Capped: true, Size: 1 << 20, Max: 100}.After(&migration.CollectionOptions{Capped: &migration.Capped{Size: 2000}, PrePostImages: &yes})
	if !h.Capped || h.Size != 2048 || h.Max != 0 || !h.PrePost {
		t.Fatalf("held %+v, want capped 2048 (rounded up to 256), no max, pre- and post-images", h)
	}
	ts := Held{TS: &migration.Timeseries{TimeField: "t", Granularity: "minutes"}}
	if h := ts.After(&migration.CollectionOptions{Timeseries: &migration.Timeseries{TimeField: "t", Granularity: "hours"}, ExpireAfterSeconds: &ttl}); h.TS.Granularity != "hours" || *h.Expire != 60 {
		t.Fatalf("held %+v", h)
	}
	if h := ts.After(&migration.CollectionOptions{Timeseries: &migration.Timeseries{TimeField: "t", Granularity: "seconds"}}); h.TS.Granularity != "minutes" {
		t.Fatalf("a finer granularity was taken: %+v", h.TS)
	}
	if ts.TS.Granularity != "minutes" {
		t.Fatal("After changed the held options it was given")
	}
}
