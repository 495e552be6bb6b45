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

// BenchmarkCheckMongoDB compares check's reference rule with the
// hand-written $lookup aggregation finding the same dangling rows, in
// the same run (docs/integrity.md): 20,000 comments over 2,000 posts, 1%
// dangling. Compare docs/s of the two sub-benchmarks; no threshold.
func BenchmarkCheckMongoDB(b *testing.B) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(b, "integrity_bench", "a benchmark of the second server")
	const posts, comments = 2000, 20000
	var ps, cs []any
	for i := 0; i < posts; i++ {
		ps = append(ps, bson.D{{Key: "_id", Value: i}})
	}
	for i := 0; i < comments; i++ {
		post := i % posts
		if i%100 == 0 {
			post = posts + i // dangling
		}
		cs = append(cs, bson.D{{Key: "_id", Value: i}, {Key: "postId", Value: post}, {Key: "text", Value: "some text of a comment"}})
	}
	if _, err := db.Collection("posts").InsertMany(ctx, ps); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Collection("comments").InsertMany(ctx, cs); err != nil {
		b.Fatal(err)
	}
	m, err := migration.Parse("0001_r.yaml", []byte("collections:\n  comments:\n    references:\n      - {path: postId, to: posts}\n"))
	if err != nil {
		b.Fatal(err)
	}
	names := map[bool]string{false: "references/mongomig", true: "references/clientside"}
	for _, clientOnly := range []bool{false, true} {
		b.Run(names[clientOnly], func(b *testing.B) {
			c, err := integrity.New(db, []*migration.Migration{m}, integrity.Options{ClientOnly: clientOnly})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				rep, err := c.Check(ctx)
				if err != nil || rep.OutOfLine != comments/100 {
					b.Fatalf("%v, %+v", err, rep.Rules)
				}
			}
			b.ReportMetric(float64(comments)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
	// The baseline: the fastest $lookup a good engineer would write for
	// the same rows, projecting the reference before the join (as check
	// does) so that the join carries no comment text.
	b.Run("references/baseline", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cur, err := db.Collection("comments").Aggregate(ctx, mongo.Pipeline{
				{{Key: "$project", Value: bson.D{{Key: "postId", Value: 1}}}},
				{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "posts"}, {Key: "localField", Value: "postId"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "p"}}}},
				{{Key: "$match", Value: bson.D{{Key: "p", Value: bson.D{{Key: "$size", Value: 0}}}}}},
				{{Key: "$project", Value: bson.D{{Key: "p", Value: 0}}}},
			})
			if err != nil {
				b.Fatal(err)
			}
			var rows []bson.Raw
			if err := cur.All(ctx, &rows); err != nil || len(rows) != comments/100 {
				b.Fatalf("%v, %d rows", err, len(rows))
			}
		}
		b.ReportMetric(float64(comments)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}
