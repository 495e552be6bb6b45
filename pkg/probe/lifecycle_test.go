package probe_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
)

// TestLifecycleSandbox: FerretDB v1 has capped collections (it removes
// the oldest documents later, in a background cleanup: the note says so),
// refuses TTL, hidden indexes, views, time series and collation, has no
// collMod, and accepts clusteredIndex and changeStreamPreAndPostImages
// without keeping them: the read-back finds them missing.
func TestLifecycleSandbox(t *testing.T) {
	l, err := probe.Lifecycle(context.Background(), sandboxtest.Database(t, "app"))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Feature(probe.FeatureCapped).Available {
		t.Errorf("capped: %+v", l.Feature(probe.FeatureCapped))
	}
	for f, want := range map[string]string{
		probe.FeatureTTL:          "createIndexes with expireAfterSeconds refused",
		probe.FeatureHidden:       "createIndexes with hidden refused",
		probe.FeatureViews:        "create with viewOn refused",
		probe.FeatureTimeseries:   "create with timeseries refused",
		probe.FeatureCollation:    "create with collation refused",
		probe.FeatureCappedResize: "collMod with cappedSize and cappedMax refused",
		probe.FeatureClustered:    "create with clusteredIndex was accepted but listCollections shows no clusteredIndex.unique (the server dropped it)",
		probe.FeaturePrePost:      "create with changeStreamPreAndPostImages was accepted but listCollections shows no changeStreamPreAndPostImages.enabled",
	} {
		if c := l.Feature(f); c.Available || !strings.Contains(c.Reason, want) {
			t.Errorf("%s: %+v, want unavailable: %s", f, c, want)
		}
	}
	if len(l.Notes) != 1 || !strings.Contains(l.Notes[0], "the server removes the oldest later, not at the insert") {
		t.Errorf("notes = %q", l.Notes)
	}
}

// TestLifecycleOnMongoDB: every feature the second server has is read
// back as sent; on MongoDB all are (capped resize from 6.0).
func TestLifecycleOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_probe_lifecycle", "no second server: TestLifecycleSandbox covers the sandbox")
	l, err := probe.Lifecycle(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	info, err := probe.Server(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if info.FerretDB2Version == "" {
		for _, f := range probe.LifecycleFeatures {
			if c := l.Feature(f); !c.Available {
				t.Errorf("MongoDB lacks %s: %s", f, c.Reason)
			}
		}
		return
	}
	// FerretDB 2 + DocumentDB (docs/lifecycle.md's table): TTL and views,
	// with their collMod; a collation accepted and dropped.
	for _, f := range []string{probe.FeatureTTL, probe.FeatureTTLModify, probe.FeatureViews, probe.FeatureViewsModify} {
		if c := l.Feature(f); !c.Available {
			t.Errorf("%s: %s", f, c.Reason)
		}
	}
	if c := l.Feature(probe.FeatureCollation); c.Available || !strings.Contains(c.Reason, "the server dropped it") {
		t.Errorf("collation: %+v", c)
	}
}
