package runner_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillCountsEveryFractionalVersion: a version that is not a whole
// number is invalid whatever its value, so the backfill visits it and
// counts it as a failure, left as stored, and the collection is not
// proven upgraded; below the target (1.5) as well as at or above it (2.5,
// 7.5: VersionAtLeast used to match them as versions, so the backfill
// never saw them and proved the collection upgraded).
func TestBackfillCountsEveryFractionalVersion(t *testing.T) {
	for _, mode := range hostileModes {
		t.Run(mode.name, func(t *testing.T) {
			checkFractional(t, sandboxtest.Database(t, "app"), mode.opts)
		})
	}
}

// TestBackfillCountsEveryFractionalVersionMongoDB is the same on a real
// MongoDB.
func TestBackfillCountsEveryFractionalVersionMongoDB(t *testing.T) {
	for _, mode := range hostileModes {
		t.Run(mode.name, func(t *testing.T) {
			checkFractional(t, sandboxtest.MongoDB(t, "mongomig_test_fraction", "TestBackfillCountsEveryFractionalVersion covers the sandbox"), mode.opts)
		})
	}
}

func checkFractional(t *testing.T, db *mongo.Database, opts backfill.Options) {
	ctx := context.Background()
	r := newRunner(t, db, copyBackFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	fractional := map[string]bson.D{}
	for i, v := range []float64{1.5, 2.5, 7.5} {
		d := bson.D{{Key: "_id", Value: int32(10 + i)}, {Key: "email", Value: "f@x"}, {Key: "version", Value: v}}
		fractional[fmt.Sprint(10+i)] = d
		if _, err := users.InsertOne(ctx, d, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := users.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "email", Value: "a@x"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "email", Value: "b@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "b@x"}}}, {Key: "version", Value: 2.0}},
	}, options.InsertMany().SetBypassDocumentValidation(true)); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	var failed int64
	ids := map[string]bool{}
	for _, g := range c.Failed {
		failed += g.Count
		for _, id := range g.ExampleIDs {
			ids[id] = true
		}
	}
	if failed != 3 || c.Proven || c.Upgraded != 1 {
		t.Errorf("%d failures (want 3), proven %v, upgraded %d (want 1): %+v", failed, c.Proven, c.Upgraded, c.Failed)
	}
	for id, d := range fractional {
		if !ids[id] {
			t.Errorf("_id %s (version %v) is not among the failures %v", id, d[2].Value, ids)
		}
		if stored := findUser(t, db, d[0].Value); js(stored) != js(d) {
			t.Errorf("_id %s: rewritten to %s", id, js(stored))
		}
	}
}
