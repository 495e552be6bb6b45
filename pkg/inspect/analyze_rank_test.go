package inspect_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/inspect"
)

// TestAnalyzeFindsGrowthThatIsNotLinear: an array whose length grows
// with the document's age monotonically but not linearly (one item more
// every five days of age, and the six oldest documents hold 1000 items)
// has a Pearson correlation of 0.43, under the default 0.5, and a rank
// correlation of 0.999. analyze used to judge growth by Pearson's alone
// and reported nothing; the rank correlation now reports it.
func TestAnalyzeFindsGrowthThatIsNotLinear(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	newest := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for age := range 100 { // age in days: 0 is the newest
		n := 1 + age/5
		if age >= 94 {
			n = 1000
		}
		items := make(bson.A, n)
		for i := range items {
			items[i] = int32(i)
		}
		id := bson.NewObjectIDFromTimestamp(newest.Add(-time.Duration(age) * 24 * time.Hour))
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "events", Value: items}})
	}
	if _, err := db.Collection("timeline").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	a, err := inspect.Analyze(ctx, db, inspect.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := a.Collections[0]
	ev := c.Arrays[0]
	if ev.AgeCorrelation == nil || *ev.AgeCorrelation >= 0.5 || *ev.AgeCorrelation < 0.4 {
		t.Fatalf("Pearson correlation %v, want the data's 0.43 (under the 0.5 threshold)", ev.AgeCorrelation)
	}
	if ev.AgeRankCorrelation == nil || *ev.AgeRankCorrelation < 0.99 {
		t.Fatalf("rank correlation %v, want 0.999", ev.AgeRankCorrelation)
	}
	if len(c.Risks) != 2 || c.Risks[0].Kind != inspect.RiskArray || c.Risks[1].Kind != inspect.RiskGrowth || c.Risks[1].Path != "events" {
		t.Fatalf("risks %+v, want the outlier array and its growth", c.Risks)
	}
	if want := "array events grows with document age (correlation 0.43, rank correlation 1.00; longest 1000, median 10)"; c.Risks[1].Message[:len(want)] != want {
		t.Errorf("message %q, want it to start %q", c.Risks[1].Message, want)
	}
}
