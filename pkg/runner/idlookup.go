package runner

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// EventSlowIDs: the server cannot find this collection's documents by _id
// through an index (FerretDB v1 with SQLite storage, the sandbox, pushes an
// _id filter down only for string and ObjectId values), so each of the
// backfill's writes reads the whole collection; Message says so, in one
// line, with the _id type.
const EventSlowIDs EventKind = "backfill.slowIds"

// noteSlowIDs emits [EventSlowIDs] for collection name when the server is
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
func (r *Runner) noteSlowIDs(ctx context.Context, ferretDB bool, name string) {
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
	r.cfg.events(Event{Kind: EventSlowIDs, Collection: name, Message: fmt.Sprintf(
		"%s: its _ids are of type %s (as the first stored document's), which FerretDB v1 cannot look up through an index (it does so only for string and ObjectId _ids): each write by _id reads the whole collection, so the backfill slows as the collection grows (see docs/sandbox.md)",
		name, id.Type)})
}
