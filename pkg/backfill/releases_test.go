package backfill_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestBackfillRefusesWhileOldReleaseLive: with every sample migration
// applied, a live release whose files stop at 0002 (it knows users at
// version 0) makes the backfill refuse with a *release.BehindError naming
// it, having written nothing; once it closed its announcement the backfill
// runs, and IgnoreReleases runs it while the release is live.
func TestBackfillRefusesWhileOldReleaseLive(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleAppliedWith(t, true)
	old := fstest.MapFS{}
	for name, f := range fixtures.Samples(t) {
		if name < "0003" {
			old[name] = f
		}
	}
	reg, err := version.New(old, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	a, err := release.Announce(ctx, db, reg, release.Options{Name: "2.0", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	below := func() int64 {
		n, err := db.Collection("users").CountDocuments(ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$ne", Value: 3}}}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := below()
	if before == 0 {
		t.Fatal("no users below version 3 in the sample")
	}
	_, err = backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}})
	var be *release.BehindError
	if !errors.As(err, &be) {
		t.Fatalf("backfill with release 2.0 live: %v, want a *release.BehindError", err)
	}
	if be.Collection != "users" || be.Target != 3 || len(be.Releases) != 1 || be.Releases[0].Name != "2.0" {
		t.Errorf("error = %+v", be)
	}
	if got := below(); got != before {
		t.Errorf("users below version 3: %d after the refusal, want %d (nothing written)", got, before)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, IgnoreReleases: true}); err != nil {
		t.Fatalf("backfill with IgnoreReleases: %v", err)
	}
	if got := below(); got != 0 {
		t.Errorf("users below version 3 after the forced backfill: %d", got)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"orders"}}); err != nil {
		t.Errorf("backfill after the release closed: %v", err)
	}
}
