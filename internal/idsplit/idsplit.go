// Package idsplit splits a collection's _id space into ranges of about
// equal size, for the jobs that walk one range per lease (a parallel
// backfill, a repair across processes): quantiles of a $sample of the
// _ids where the server has $sample, else every k-th _id read in order.
// The split points are the ranges' bounds: range i is [splits[i-1],
// splits[i]), the first and last open-ended.
package idsplit

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Sampled asks the server for a sample of ranges*perRange _ids, sorted,
// and takes ranges-1 evenly spaced of them (see [Quantiles]). A server
// without $sample answers NotImplemented (FerretDB v1): use [Scanned].
func Sampled(ctx context.Context, coll *mongo.Collection, ranges, perRange int64) (bson.A, error) {
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$sample", Value: bson.D{{Key: "size", Value: ranges * perRange}}}},
		{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var ids []bson.RawValue
	for cur.Next(ctx) {
		ids = append(ids, OwnID(cur.Current))
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	return Quantiles(ids, ranges), nil
}

// Quantiles returns the ranges-1 elements of sorted that split it into
// ranges parts of equal length, each once.
func Quantiles(sorted []bson.RawValue, ranges int64) bson.A {
	splits := bson.A{}
	var last bson.RawValue
	for j := int64(1); j < ranges && len(sorted) > 0; j++ {
		id := sorted[j*int64(len(sorted))/ranges]
		if j > 1 && id.Equal(last) {
			continue // fewer samples than ranges (a small collection)
		}
		splits = append(splits, id)
		last = id
	}
	return splits
}

// Scanned reads the _ids of the documents of filter in order and keeps
// every per-th.
func Scanned(ctx context.Context, coll *mongo.Collection, filter bson.D, per int64) (bson.A, error) {
	name := coll.Name()
	splits := bson.A{}
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read %s _ids: %w", name, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var i int64
	for cur.Next(ctx) {
		if i > 0 && i%per == 0 {
			splits = append(splits, OwnID(cur.Current))
		}
		i++
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("read %s _ids: %w", name, err)
	}
	return splits, nil
}

// OwnID copies the _id of a cursor's current document, which is only
// valid until the cursor moves.
func OwnID(doc bson.Raw) bson.RawValue {
	v := doc.Lookup("_id")
	v.Value = append([]byte(nil), v.Value...)
	return v
}
