package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestBackfillCountsAFuncPanicAsThatDocumentsFailure: a func step that
// panics on one document (a bug in the team's Go function) fails that
// document, grouped with its _id and naming the func, the file and the
// step; the backfill upgrades the others and says failures remain,
// instead of the panic ending the process.
func TestBackfillCountsAFuncPanicAsThatDocumentsFailure(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	panicky := func(d bson.D) (bson.D, error) {
		for _, e := range d {
			if e.Key == "i" && e.Value == int32(7) {
				panic("item 7 has no price")
			}
		}
		return incN(d)
	}
	r, err := runner.New(db, counterFS, runner.WithVersionOptions(version.WithFunc("incN", panicky)), runner.WithLockLease(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	var seven bson.D
	if err := db.Collection("items").FindOne(ctx, bson.D{{Key: "i", Value: int32(7)}}).Decode(&seven); err != nil {
		t.Fatal(err)
	}
	id, _ := bsonx.Lookup(seven, "_id")
	c := res.Collections[0]
	if !res.FailuresRemain() || c.Upgraded != 29 || len(c.Failed) != 1 {
		t.Fatalf("upgraded %d, failed %+v; want 29 and one group", c.Upgraded, c.Failed)
	}
	g := c.Failed[0]
	if g.Rule != "upgrade" || g.Count != 1 || len(g.ExampleIDs) != 1 || !strings.Contains(g.ExampleIDs[0], id.(bson.ObjectID).Hex()) {
		t.Errorf("group %+v; want one upgrade failure, item 7 (%v)", g, id)
	}
	if want := "0001_count.yaml step 1 (func): func incN panicked: item 7 has no price"; !strings.Contains(g.Message, want) {
		t.Errorf("message %q lacks %q", g.Message, want)
	}
	if _, upgraded := bsonx.Lookup(seven, "migrated"); upgraded {
		t.Errorf("item 7 was written: %v", seven)
	}
}
