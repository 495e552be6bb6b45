package backfill

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// readBatch reads up to n documents in _id order with a query of its own.
func (r *backfiller) readBatch(ctx context.Context, coll *mongo.Collection, filter bson.D, n int) ([]bson.D, error) {
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(n)).SetBatchSize(int32(n)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	var docs []bson.D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return docs, nil
}

// writeBatch upgrades docs (raws: the same documents as read) and writes
// them as guarded deltas in one unordered bulk write. Documents whose guard
// did not match (another writer got there first) are re-read and retried
// once; those that still conflict are counted and left alone. A document
// whose write the server refuses (a duplicate key, its validator; see
// bulk) joins failed: it stays at its version and the rest are written.
func (r *backfiller) writeBatch(ctx context.Context, coll *mongo.Collection, name string, docs []bson.D, raws []bson.Raw, failed map[string]*FailureGroup, g guards) (upgraded, conflicts, trips int64, err error) {
	models, ids := r.upgradeModels(name, docs, raws, failed, g)
	if len(models) == 0 {
		return 0, 0, 0, nil
	}
	matched, refused, err := r.bulk(ctx, coll, models)
	trips++
	if err != nil {
		return matched, 0, trips, err
	}
	refuse(failed, name, ids, refused)
	if matched+int64(len(refused)) == int64(len(models)) {
		return matched, 0, trips, nil
	}
	// Some guards did not match: find which documents are still below
	// target, and retry those once from a fresh read. A refused document
	// is below it too, and counted already.
	pending := without(ids, refused)
	again, err := r.readBatch(context.WithoutCancel(ctx), coll, bson.D{{Key: "$and", Value: bson.A{
		bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: pending}}}}, r.belowFilter(r.registry.Current(name)),
	}}}, len(pending))
	trips++
	if err != nil {
		return matched, 0, trips, err
	}
	// A document whose upgrade fails now (it changed since the first
	// read) is a failure: the checkpoint passes no document neither
	// written nor counted.
	retry, retryIDs := r.upgradeModels(name, again, nil, failed, g)
	// The others were upgraded by another writer (the application's
	// write-back) or deleted: this run wrote none of them, so none is
	// counted (issue 24, hole 8). What it wrote is what its guards matched.
	upgraded = matched
	if len(retry) > 0 {
		m2, refused2, err := r.bulk(ctx, coll, retry)
		trips++
		if err != nil {
			return upgraded + m2, 0, trips, err
		}
		refuse(failed, name, retryIDs, refused2)
		upgraded += m2
		conflicts = int64(len(retry)-len(refused2)) - m2
	}
	return upgraded, conflicts, trips, nil
}

// guards is how a batch's writes are filtered: idOnly, on _id alone
// (Options.AssumeNoWriters); otherwise on _id and the old value of every
// field the upgrade reads or changes, and with whole, a document a func
// step reads whole on being exactly as read, in one clause (see
// wholeGuards).
type guards struct {
	idOnly, whole bool
	arrays        version.Arrays // how a field that held an array is guarded
}

// upgradeModels builds one update per document that needs one: the delta
// of its upgrade, filtered as g says (a guarded delta). raws, if not
// nil, are docs as read (see validateUpgrade).
func (r *backfiller) upgradeModels(name string, docs []bson.D, raws []bson.Raw, failed map[string]*FailureGroup, g guards) ([]mongo.WriteModel, bson.A) {
	models := make([]mongo.WriteModel, 0, len(docs))
	// The batch's update models in one allocation: they live as long as
	// the batch.
	updates := make([]mongo.UpdateOneModel, len(docs))
	ids := make(bson.A, 0, len(docs))
	enforce := migration.StateBefore(r.migrations, name, math.MaxInt64).Action != migration.ActionWarn
	var scratch []byte
	for i, d := range docs {
		up, changed, err := r.registry.Upgrade(name, d)
		if err == nil {
			err = r.markerTrusted(name, d)
		}
		var delta version.Delta
		if err == nil && changed {
			// Guards what the upgrade read as well as what it writes (see
			// Registry.DeltaFor): a writer who changed a source since the read
			// makes the write match nothing.
			delta, err = r.deltaFor(name, d, up, g)
		}
		if err == nil && changed && enforce {
			// An upgrade that fails the schema it upgrades to is a failure,
			// not a write: the validator mongomig enforces (client-side
			// where the server cannot) would refuse it.
			var raw bson.Raw
			if raws != nil {
				raw = raws[i]
			}
			scratch, err = r.validateUpgrade(name, up, raw, delta, scratch)
		}
		if err == nil && changed {
			id, _ := bsonx.Lookup(d, "_id")
			filter := delta.Filter
			if g.idOnly {
				filter = bson.D{{Key: "_id", Value: id}}
			}
			models = append(models, updates[len(models)].SetFilter(filter).SetUpdate(delta.Update))
			ids = append(ids, id)
			continue
		}
		if err != nil {
			rule, key, msg := backfillFailure(err)
			g := failed[key]
			if g == nil {
				g = &FailureGroup{Rule: rule, Message: msg}
				failed[key] = g
			}
			raw, _ := bson.Marshal(d)
			g.Add(bsonx.IDOf(raw))
		}
	}
	return models, ids
}

// deltaFor is the guarded delta of d's upgrade up: Registry.DeltaFor's,
// whose filter, when g.whole and a func step reads d whole, is
// version.WholeFilter: d exactly as read, every field the per-field
// guards name and the others.
func (r *backfiller) deltaFor(name string, d, up bson.D, g guards) (version.Delta, error) {
	if !g.whole || g.idOnly || !r.registry.ReadsWhole(name, d) {
		return r.registry.DeltaForOn(name, d, up, g.arrays)
	}
	delta, err := version.DeltaOfFor(d, up, g.arrays)
	if err != nil || delta.Empty() {
		return delta, err
	}
	id, _ := bsonx.Lookup(d, "_id")
	delta.Filter = version.WholeFilter(id, d)
	return delta, nil
}

// bulk runs an unordered bulk write and returns how many filters matched
// and the statements the server refused for their document (see
// refusesDocument), the others written. On MongoDB those are the bulk
// write's WriteErrors (their Index is the model's). FerretDB fails a whole
// bulk write when one statement fails (earlier ones applied, later ones
// skipped, no counts): the statements are then run one by one (see
// bulkOneByOne). A transient error that outlasts the retries, a lost lease
// and any other error stop the batch: err.
func (r *backfiller) bulk(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (int64, []refusal, error) {
	// Transient failures (a failover, a lost connection) are retried as a
	// whole: every write sets absolute values under a filter, so a repeat
	// changes nothing more.
	var res *mongo.BulkWriteResult
	var fenced error
	err := retryTransient(ctx, func() (err error) {
		if fenced = lease.Fence(ctx); fenced != nil {
			return fenced // the backfill lease may have expired: write nothing
		}
		res, err = coll.BulkWrite(context.WithoutCancel(ctx), models, options.BulkWrite().SetOrdered(false))
		return err
	})
	var bwe mongo.BulkWriteException
	switch {
	case err == nil:
		return res.MatchedCount, nil, nil
	case fenced != nil:
		return 0, nil, fenced
	case probe.Transient(err):
		return 0, nil, fmt.Errorf("write a batch of %s: %w; nothing is lost: run backfill again, it resumes from the checkpoint", coll.Name(), err)
	case errors.As(err, &bwe) && bwe.WriteConcernError == nil && len(bwe.WriteErrors) > 0:
		refused := make([]refusal, 0, len(bwe.WriteErrors))
		for _, we := range bwe.WriteErrors {
			if !probe.RefusesDocument(we.Code) {
				return res.MatchedCount, nil, fmt.Errorf("write a batch of %s: %w; run backfill again once the cause is fixed, it resumes from the checkpoint", coll.Name(), err)
			}
			refused = append(refused, refusal{index: we.Index, err: we.WriteError})
		}
		return res.MatchedCount, refused, nil
	}
	return r.bulkOneByOne(ctx, coll, models)
}

// bulkOneByOne runs models one at a time, each after the fence, and
// returns what bulk does: a statement the server refuses for its document
// is a refusal and the next one runs.
func (r *backfiller) bulkOneByOne(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (matched int64, refused []refusal, err error) {
	// The failed bulk write applied the statements before the one refused:
	// their guards match nothing now, and they are this run's writes.
	var before int64
	defer func() {
		if len(refused) > 0 {
			matched += before
		}
	}()
	for i, m := range models {
		u := m.(*mongo.UpdateOneModel)
		var one *mongo.UpdateResult
		var fenced error
		err := retryTransient(ctx, func() (err error) {
			if fenced = lease.Fence(ctx); fenced != nil {
				return fenced
			}
			one, err = coll.UpdateOne(context.WithoutCancel(ctx), u.Filter, u.Update)
			return err
		})
		switch {
		case err == nil:
			matched += one.MatchedCount
			if one.MatchedCount == 0 && len(refused) == 0 {
				before++
			}
		case fenced == nil && !probe.Transient(err) && probe.RefusesDocument(probe.ServerCode(err)):
			refused = append(refused, refusal{index: i, err: err})
		case fenced != nil:
			return matched, refused, fenced
		default:
			id, _ := bsonx.Lookup(u.Filter.(bson.D), "_id")
			raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
			return matched, refused, fmt.Errorf("write the upgraded %s document _id=%s: %w; nothing is lost: run backfill again (once the cause is fixed), it resumes from the checkpoint",
				coll.Name(), bsonx.IDOf(raw), err)
		}
	}
	return matched, refused, nil
}
