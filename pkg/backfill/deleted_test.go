package backfill_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillDoesNotCountADeletedDocument: the application deletes a
// document between the backfill's read and its write. Its write matches
// nothing and it is not upgraded, so it is not counted: the run reports the
// 29 documents it upgraded. A document whose write matched nothing and that
// was no longer below the target on the re-read used to count as upgraded
// "by us or another upgrade", a deleted one too.
func TestBackfillDoesNotCountADeletedDocument(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	insertItems(t, db, 30)
	r := counterRunner(t, db)
	items := db.Collection("items")
	deleted := false
	backfill.SetHook(r, func(point string, _ int64, _ int) {
		if point != "backfill.read" || deleted {
			return
		}
		deleted = true
		var first bson.M
		if err := items.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}})).Decode(&first); err != nil {
			t.Error(err)
			return
		}
		if _, err := items.DeleteOne(ctx, bson.D{{Key: "_id", Value: first["_id"]}}); err != nil {
			t.Error(err)
		}
	})
	res, err := backfill.Run(ctx, r, backfill.Options{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Collections[0]; c.Upgraded != 29 || c.TotalUpgraded != 29 || c.Conflicts != 0 || !c.Proven {
		t.Errorf("upgraded %d, total %d, conflicts %d, proven %v; want 29, 29, 0, proven", c.Upgraded, c.TotalUpgraded, c.Conflicts, c.Proven)
	}
	checkItems(t, db, 29)
}
