package probe

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// changeStreamWait bounds the wait for the probe's insert to come out of
// the change stream.
const changeStreamWait = 5 * time.Second

// probeChangeStreams opens a change stream on the scratch collection,
// inserts a document and waits for its event.
func probeChangeStreams(ctx context.Context, coll *mongo.Collection) (Capability, error) {
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if refused, cerr := classify(err, "change stream"); cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	defer func() { _ = cs.Close(context.WithoutCancel(ctx)) }()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 3}}); err != nil {
		return Capability{}, fmt.Errorf("probe: insert into scratch collection %s: %w", coll.Name(), err)
	}
	wctx, cancel := context.WithTimeout(ctx, changeStreamWait)
	defer cancel()
	for cs.Next(wctx) {
		var ev struct {
			Op  string `bson:"operationType"`
			Key struct {
				ID any `bson:"_id"`
			} `bson:"documentKey"`
		}
		if err := cs.Decode(&ev); err != nil {
			return Capability{}, fmt.Errorf("probe: decode a change event: %w", err)
		}
		if ev.Op == "insert" && ev.Key.ID == int32(3) {
			return Capability{Available: true}, nil
		}
	}
	if ctx.Err() != nil {
		return Capability{}, fmt.Errorf("probe change stream: %w", ctx.Err())
	}
	if err := cs.Err(); err != nil && wctx.Err() == nil {
		refused, cerr := classify(err, "change stream")
		return refused, cerr
	}
	return Capability{Reason: fmt.Sprintf("a change stream opened but delivered no event in %s for an insert", changeStreamWait)}, nil
}
