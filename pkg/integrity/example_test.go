package integrity_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

// setCredits is what docs/integrity.md shows: the application changes a
// class, then propagates the change to every student's copy.
func setCredits(ctx context.Context, db *mongo.Database, migrations []*migration.Migration, class string, credits int) error {
	_, err := db.Collection("classes").UpdateOne(ctx, bson.D{{Key: "_id", Value: class}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "credits", Value: credits}}}})
	if err != nil {
		return err
	}
	checker, err := integrity.New(db, migrations, integrity.Options{})
	if err != nil {
		return err
	}
	// Killed or failed midway: call it again, or leave it to repair.
	_, err = checker.Propagate(ctx, "classes", class)
	return err
}

func TestSetCreditsExample(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "integrity")
	campus(t, db)
	if err := setCredits(ctx, db, rules(t), "math", 4); err != nil {
		t.Fatal(err)
	}
	n, err := db.Collection("students").CountDocuments(ctx, bson.D{{Key: "classes.credits", Value: 3}})
	if err != nil || n != 0 {
		t.Errorf("%d students still hold 3 credits (%v)", n, err)
	}
}
