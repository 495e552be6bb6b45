package backfill_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestBackfillGroupsFailuresByKind: documents whose version or progress
// marker is invalid fail the same way whatever their _id and value, so
// they share one group per kind (as validate groups them), with a bounded
// list of _ids and at most a short excerpt of a value (document data); each
// used to be a group of its own quoting its _id and its whole value.
func TestBackfillGroupsFailuresByKind(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	secret := strings.Repeat("secret-value-", 40)
	var docs []any
	for i := 0; i < 18; i++ {
		docs = append(docs,
			bson.D{{Key: "_id", Value: fmt.Sprintf("badver-%02d", i)}, {Key: "version", Value: fmt.Sprint(secret, i)}},
			bson.D{{Key: "_id", Value: fmt.Sprintf("badmark-%02d", i)}, {Key: version.MarkerField, Value: fmt.Sprint(secret, i)}})
	}
	if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	res, err := backfill.Run(ctx, r, backfill.Options{ClientSide: true, Collections: []string{"users"}})
	if err != nil {
		t.Fatal(err)
	}
	failed := res.Collections[0].Failed
	if len(failed) != 2 {
		t.Fatalf("%d failure groups, want 2 (one per kind):\n%+v", len(failed), failed)
	}
	for _, g := range failed {
		if g.Count != 18 || len(g.ExampleIDs) != bsonx.MaxExampleIDs {
			t.Errorf("group %q: %d documents, %d example ids; want 18 and %d", g.Message, g.Count, len(g.ExampleIDs), bsonx.MaxExampleIDs)
		}
		if strings.Contains(g.Message, "badver") || strings.Contains(g.Message, "badmark") {
			t.Errorf("group message names an _id: %s", g.Message)
		}
		if strings.Contains(g.Message, strings.Repeat("secret-value-", 3)) {
			t.Errorf("group message quotes more than an excerpt of a value: %s", g.Message)
		}
	}
}

// TestBackfillWorkersAfterProofSaySweep: once a target is proven its ranges
// are gone, so a later --workers run sweeps documents written below it
// since with one worker; the result says why no ranges were used (it used
// to be silent, looking like --workers did nothing).
func TestBackfillWorkersAfterProofSaySweep(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	r := counterRunner(t, db)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	if err != nil || !res.Collections[0].Proven || res.Collections[0].Ranges == 0 || res.Collections[0].RangesNote != "" {
		t.Fatalf("first run: %+v %v", res, err)
	}
	insertItems(t, db, 40)
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.Upgraded != 40 || !c.Proven || c.Ranges != 0 || !strings.Contains(c.RangesNote, "the ranges of version 1 were walked") {
		t.Errorf("second run: %+v", c)
	}
	checkItems(t, db, 70)
}

// TestBackfillWorkersAfterRangesDoneSaySweep: the same when the ranges are
// recorded done but the target is not proven (a document fails): the
// rerun sweeps, and says why no ranges were walked.
func TestBackfillWorkersAfterRangesDoneSaySweep(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	if _, err := db.Collection("items").InsertOne(ctx, bson.D{{Key: "_id", Value: "bad"}, {Key: "n", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	r := counterRunner(t, db)
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	if err != nil || res.Collections[0].Proven || res.Collections[0].Ranges == 0 || len(res.Collections[0].Failed) != 1 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	insertItems(t, db, 40)
	res, err = backfill.Run(ctx, r, backfill.Options{Batch: 5, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	if c.Upgraded != 40 || c.Ranges != 0 || len(c.Failed) != 1 || !strings.Contains(c.RangesNote, "the ranges of version 1 were walked") {
		t.Errorf("second run: %+v", c)
	}
}
