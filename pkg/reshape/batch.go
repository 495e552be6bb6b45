package reshape

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// nextBatch reads the next batch of coll's documents matching filter in
// _id order, after the last _id the progress checkpointed (rule 3: a
// resumed walk goes on from there), with projection (nil: whole
// documents). Every walk of an operation reads through it.
func (o *operation) nextBatch(ctx context.Context, coll *mongo.Collection, filter, projection bson.D) ([]bson.Raw, error) {
	if filter == nil {
		filter = bson.D{} // a nil bson.D is sent as null
	}
	if o.p.LastID != nil {
		after := bsonx.AfterID(o.p.LastID, o.ferretDB)
		if len(filter) == 0 {
			filter = after
		} else {
			filter = bson.D{{Key: "$and", Value: bson.A{filter, after}}}
		}
	}
	find := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(o.opts.Batch))
	if projection != nil {
		find.SetProjection(projection)
	}
	cur, err := coll.Find(ctx, filter, find)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return docs, nil
}
