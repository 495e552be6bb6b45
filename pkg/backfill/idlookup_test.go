package backfill_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// slowIDEvents backfills 20 items whose _ids are made by id and returns
// the backfill.slowIds events it emitted.
func slowIDEvents(t *testing.T, id func(i int) any) []events.Entry {
	t.Helper()
	db := sandboxtest.Database(t, "app")
	docs := make([]any, 20)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: id(i)}, {Key: "i", Value: int32(i)}, {Key: "n", Value: int32(0)}}
	}
	if _, err := db.Collection("items").InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []events.Entry
	r := counterRunner(t, db, runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind() == "backfill.slowIds" {
			got = append(got, e)
		}
	})))
	res, err := backfill.Run(context.Background(), r, backfill.Options{Batch: 10})
	if err != nil || res.Collections[0].Upgraded != 20 {
		t.Fatalf("backfill: %+v %v", res, err)
	}
	checkItems(t, db, 20)
	return got
}

// TestBackfillNotesSlowIDTypes: on the sandbox (FerretDB v1, SQLite), whose
// writes find an int _id by reading the whole collection, the backfill says
// so once per collection, in one line naming the collection and the type;
// ObjectId and string _ids, which FerretDB looks up by index, get no notice.
func TestBackfillNotesSlowIDTypes(t *testing.T) {
	got := slowIDEvents(t, func(i int) any { return int32(i + 1) })
	if len(got) != 1 {
		t.Fatalf("%d %s events for int _ids, want 1: %+v", len(got), "backfill.slowIds", got)
	}
	e := got[0]
	if e.(events.BackfillSlowIDs).Collection != "items" || !strings.HasPrefix(e.String(), "items: ") || !strings.Contains(e.String(), "32-bit integer") || strings.Contains(e.String(), "\n") {
		t.Errorf("notice %+v: want one line naming items and the _id type", e)
	}
	for name, id := range map[string]func(int) any{
		"ObjectId": func(int) any { return bson.NewObjectID() },
		"string":   func(i int) any { return string(rune('a'+i)) + "-id" },
	} {
		if events := slowIDEvents(t, id); len(events) != 0 {
			t.Errorf("%s _ids: unexpected notice %+v", name, events)
		}
	}
}
