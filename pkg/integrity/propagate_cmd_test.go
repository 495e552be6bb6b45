package integrity_test

import (
	"context"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// TestPropagateCommandMongoDB pins the update Propagate sends for a copy
// inside an array: one updateMany per batch of _ids, setting the copied
// field alone through the array filter on the element's reference
// (MongoDB's $[<identifier>], src/mongo/db/update/update_array_node.cpp).
func TestPropagateCommandMongoDB(t *testing.T) {
	uriDB := sandboxtest.MongoDB(t, "integrity_propagate_cmd", "the sandbox has no array filters (TestPropagateResumes covers its per-element path)")
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor()))
	db := client.Database(uriDB.Name())
	ctx := context.Background()
	campus(t, db)
	set(t, db, "classes", "math", "credits", int32(4))
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	ps, err := c.Propagate(ctx, "classes", "math")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Method != "arrayFilters" || ps[0].Modified != 9 || ps[1].Modified != 0 {
		t.Errorf("propagated %+v: want credits written to 9 students through arrayFilters, names unchanged", ps)
	}
	updates := rec.Named("update")
	if len(updates) == 0 {
		t.Fatal("no update sent")
	}
	got := updates[0].Lookup("updates").String()
	want := `[{"q": {"_id": {"$in": [{"$numberInt":"1"},{"$numberInt":"2"},{"$numberInt":"3"}]},"classes._id": "math"},` +
		`"u": {"$set": {"classes.$[e].credits": {"$numberInt":"4"}}},"multi": true,"arrayFilters": [{"e._id": "math"}]}]`
	if got != want {
		t.Errorf("first update:\n%s\nwant:\n%s", got, want)
	}
}
