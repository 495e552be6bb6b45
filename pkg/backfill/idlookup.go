package backfill

import (
	"context"

	"github.com/mongomig/mongomig/pkg/events"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// noteSlowIDs logs events.BackfillSlowIDs for collection name when the server is
// FerretDB and says, for the _id of the first document it stores, that it
// would evaluate {_id: that value} without its storage's WHERE clause
// (explain's filterPushdown: false). It costs two round trips and no scan:
// an aggregate of $limit 1 (FerretDB reads the table lazily: one row is
// read) and an explain (SQLite's EXPLAIN QUERY PLAN). An aggregate, not a
// find, so that the backfill's reads stay one find per pass. The first
// document stands for the collection: _ids of mixed types are rare. MongoDB, and FerretDB when
// filterPushdown is true or absent, get no notice. The notice is advice:
// when either command fails, none is given (the backfill reports the
// server's errors itself).
func (r *backfiller) noteSlowIDs(ctx context.Context, ferretDB bool, name string) {
	if !ferretDB {
		return
	}
	cur, err := r.db.Collection(name).Aggregate(ctx, mongo.Pipeline{{{Key: "$limit", Value: 1}}, {{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}}})
	if err != nil {
		return
	}
	defer cur.Close(context.WithoutCancel(ctx))
	if !cur.Next(ctx) {
		return
	}
	id, err := cur.Current.LookupErr("_id")
	if err != nil {
		return
	}
	var plan struct {
		FilterPushdown *bool `bson:"filterPushdown"`
	}
	explain := bson.D{
		{Key: "explain", Value: bson.D{{Key: "find", Value: name}, {Key: "filter", Value: bson.D{{Key: "_id", Value: id}}}}},
	}
	if err := r.db.RunCommand(ctx, explain).Decode(&plan); err != nil || plan.FilterPushdown == nil || *plan.FilterPushdown {
		return
	}
	r.log.Log(events.BackfillSlowIDs{Collection: name, IDType: id.Type.String()})
}
