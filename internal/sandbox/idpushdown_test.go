package sandbox_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestIDPushdownByType pins what docs/sandbox.md says about writes by _id:
// FerretDB v1.24's SQLite backend turns a bare {_id: v} filter into a SQL
// WHERE (which the sandbox's index serves) only when v is a string or an
// ObjectId (internal/backends/sqlite/collection.go, Query). For any other
// type it reads the whole table and filters in Go, before the indexed
// UPDATE, so no index of the sandbox's can help. A FerretDB that pushes
// more types down fails this test: the docs and the backfill's notice
// (runner.EventSlowIDs) are then to be revised.
func TestIDPushdownByType(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	uuid := bson.Binary{Subtype: 4, Data: make([]byte, 16)}
	ids := []struct {
		name     string
		id       any
		pushdown bool
	}{
		{"ObjectId", bson.NewObjectID(), true},
		{"string", "a", true},
		{"int32", int32(7), false},
		{"int64", int64(8), false},
		{"double", 7.5, false},
		{"UUID", uuid, false},
		{"date", bson.NewDateTimeFromTime(time.Unix(0, 0)), false},
		{"document", bson.D{{Key: "k", Value: 1}}, false},
	}
	for _, c := range ids {
		if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: c.id}}); err != nil {
			t.Fatal(err)
		}
		var plan struct {
			FilterPushdown *bool `bson:"filterPushdown"`
		}
		cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: c.id}}}}}}
		if err := db.RunCommand(ctx, cmd).Decode(&plan); err != nil {
			t.Fatal(err)
		}
		if plan.FilterPushdown == nil || *plan.FilterPushdown != c.pushdown {
			t.Errorf("_id of type %s: filterPushdown %v, want %v", c.name, plan.FilterPushdown, c.pushdown)
		}
	}
}
