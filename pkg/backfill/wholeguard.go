package backfill

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// wholeGuards reports whether the guarded writes of coll's batch may
// guard a document that a func step reads whole with one clause,
// version.WholeFilter, instead of a guard per field as read (eleven
// clauses for a document of ten fields, each excluding arrays): on the
// second test server the bulk writes of the benchmark migration take
// about 0.7x the time with it (docs/performance.md). Only where the
// server applies guarded writes atomically (probe.GuardedWrites) and
// evaluates the clause, which a read of coll finding no document shows
// once per run: {_id: MinKey} with the clause, through the _id index. A
// server that refuses it gets the per-field guards, which say the same;
// a transient failure of that read too, and the question is asked again
// at the next batch.
func (r *backfiller) wholeGuards(ctx context.Context, coll *mongo.Collection, guarded bool) bool {
	if !guarded {
		return false
	}
	r.mu.Lock()
	known, whole := r.wholeKnown, r.whole
	r.mu.Unlock()
	if known {
		return whole
	}
	err := coll.FindOne(ctx, version.WholeFilter(bson.MinKey{}, bson.D{})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		whole = true
	case err == nil:
		whole = false // a document matched a filter no document can match
	case probe.Transient(err) || ctx.Err() != nil:
		return false
	}
	r.mu.Lock()
	r.whole, r.wholeKnown = whole, true
	r.mu.Unlock()
	return whole
}
