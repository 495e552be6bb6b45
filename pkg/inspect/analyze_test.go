package inspect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/inspect"
)

// TestAnalyzeFlagsRisks: a bloated collection, an array that grows with
// document age, an outlier array, a sparse field, a mixed type and a
// version histogram are reported; the sample data raises no risk.
func TestAnalyzeFlagsRisks(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	big := loadRisky(t, db)

	a, err := inspect.Analyze(ctx, db, inspect.AnalyzeOptions{SizeWarn: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*inspect.CollectionAnalysis{}
	for _, c := range a.Collections {
		by[c.Collection] = c
	}
	kinds := func(c *inspect.CollectionAnalysis) string {
		var k []string
		for _, r := range c.Risks {
			k = append(k, r.Kind+":"+r.Path)
		}
		return strings.Join(k, " ")
	}
	b := by["bloated"]
	if kinds(b) != "size:" || b.Size.Largest[0].ID != inspect.ExtJSON(`{"$oid":"`+big.Hex()+`"}`) || b.Size.Max < 600<<10 || b.Size.Max > 601<<10 {
		t.Errorf("bloated = %+v, risks %s", b.Size, kinds(b))
	}
	if b.Size.P50 < 20<<10 || float64(b.Size.P50) > 1.02*float64(21<<10) {
		t.Errorf("bloated p50 = %d, want about 20 KiB", b.Size.P50)
	}
	f := by["feeds"]
	if kinds(f) != "growth:events array:meta.logs" {
		t.Errorf("feeds risks = %s\n%+v", kinds(f), f.Risks)
	}
	ev := f.Arrays[0]
	if ev.Path != "events" || ev.Max != 100 || ev.P50 != 50 || ev.AgeCorrelation == nil || *ev.AgeCorrelation < 0.99 {
		t.Errorf("events = %+v", ev)
	}
	// version is on 10%: not below the default 10%.
	if len(f.Sparse) != 1 || f.Sparse[0].Path != "rare" || f.Sparse[0].Present != 5 || f.Sparse[0].Of != 100 {
		t.Errorf("sparse = %+v", f.Sparse)
	}
	if len(f.Versions) != 2 || f.Versions[0].Version != 0 || f.Versions[0].Count != 90 || f.Versions[1].Version != 2 || f.Versions[1].Count != 10 {
		t.Errorf("versions = %+v", f.Versions)
	}
	// {_id, events: [...], meta: {logs: [...]}, rare, version}
	if f.MaxDepth != 3 || f.MaxFields != 6 {
		t.Errorf("depth %d, fields %d", f.MaxDepth, f.MaxFields)
	}
	for _, name := range []string{"users", "orders", "posts", "comments"} {
		if c := by[name]; len(c.Risks) != 0 {
			t.Errorf("%s risks = %+v", name, c.Risks)
		}
	}
	if a.Risks != 3 {
		t.Errorf("risks = %d", a.Risks)
	}
}

// loadRisky writes a bloated collection (one document of 600 KiB among
// 20 KiB ones, whose _id it returns) and feeds, whose events array is
// longer the older the document, with an outlier meta.logs array, a
// sparse field and versions.
func loadRisky(t *testing.T, db *mongo.Database) bson.ObjectID {
	t.Helper()
	ctx := context.Background()
	var bloated []any
	var big bson.ObjectID
	for i := 0; i < 20; i++ {
		id := bson.NewObjectID()
		size := 20 << 10
		if i == 7 {
			big, size = id, 600<<10
		}
		bloated = append(bloated, bson.D{{Key: "_id", Value: id}, {Key: "blob", Value: strings.Repeat("x", size)}})
	}
	if _, err := db.Collection("bloated").InsertMany(ctx, bloated); err != nil {
		t.Fatal(err)
	}
	var feeds []any
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100; i++ {
		events := bson.A{}
		for j := 0; j < 100-i; j++ { // older documents hold longer arrays
			events = append(events, int32(j))
		}
		logs := bson.A{"a", "b"}
		if i == 50 {
			for j := 0; j < 500; j++ {
				logs = append(logs, "c")
			}
		}
		d := bson.D{{Key: "_id", Value: bson.NewObjectIDFromTimestamp(start.Add(time.Duration(i) * 24 * time.Hour))},
			{Key: "events", Value: events}, {Key: "meta", Value: bson.D{{Key: "logs", Value: logs}}}}
		if i%20 == 0 {
			d = append(d, bson.E{Key: "rare", Value: true})
		}
		if i%10 == 0 {
			d = append(d, bson.E{Key: "version", Value: int32(2)})
		}
		feeds = append(feeds, d)
	}
	if _, err := db.Collection("feeds").InsertMany(ctx, feeds); err != nil {
		t.Fatal(err)
	}

	return big
}
