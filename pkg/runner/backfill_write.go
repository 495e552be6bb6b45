package runner

import (
	"context"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// readBatch reads up to n documents in _id order with a query of its own.
func (r *Runner) readBatch(ctx context.Context, coll *mongo.Collection, filter bson.D, n int) ([]bson.D, error) {
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
// once; those that still conflict are counted and left alone.
func (r *Runner) writeBatch(ctx context.Context, coll *mongo.Collection, name string, docs []bson.D, raws []bson.Raw, failed map[string]*FailureGroup, idOnly bool) (upgraded, conflicts, trips int64, err error) {
	models, ids := r.upgradeModels(name, docs, raws, failed, idOnly)
	if len(models) == 0 {
		return 0, 0, 0, nil
	}
	matched, err := r.bulk(ctx, coll, models)
	trips++
	if err != nil {
		return 0, 0, trips, err
	}
	if matched == int64(len(models)) {
		return matched, 0, trips, nil
	}
	// Some guards did not match: find which documents are still below
	// target, and retry those once from a fresh read.
	again, err := r.readBatch(context.WithoutCancel(ctx), coll, bson.D{{Key: "$and", Value: bson.A{
		bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, r.belowFilter(r.registry.Current(name)),
	}}}, len(ids))
	trips++
	if err != nil {
		return matched, 0, trips, err
	}
	retry, _ := r.upgradeModels(name, again, nil, map[string]*FailureGroup{}, idOnly)
	upgraded = int64(len(models) - len(again)) // written by us or by another upgrade
	if len(retry) > 0 {
		m2, err := r.bulk(ctx, coll, retry)
		trips++
		if err != nil {
			return upgraded, 0, trips, err
		}
		upgraded += m2
		conflicts = int64(len(retry)) - m2
	}
	return upgraded, conflicts, trips, nil
}

// upgradeModels builds one update per document that needs one: the delta
// of its upgrade, filtered on _id and the old value of every field it
// changes (a guarded delta), or on _id alone when idOnly. raws, if not
// nil, are docs as read (see validateUpgrade).
func (r *Runner) upgradeModels(name string, docs []bson.D, raws []bson.Raw, failed map[string]*FailureGroup, idOnly bool) ([]mongo.WriteModel, bson.A) {
	models := make([]mongo.WriteModel, 0, len(docs))
	// The batch's update models in one allocation: they live as long as
	// the batch.
	updates := make([]mongo.UpdateOneModel, len(docs))
	ids := make(bson.A, 0, len(docs))
	enforce := stateBefore(r.migrations, name, math.MaxInt64).action != migration.ActionWarn
	var scratch []byte
	for i, d := range docs {
		up, changed, err := r.registry.Upgrade(name, d)
		var delta version.Delta
		if err == nil && changed {
			// Guards what the upgrade read as well as what it writes (see
			// Registry.DeltaFor): a writer who changed a source since the read
			// makes the write match nothing.
			delta, err = r.registry.DeltaFor(name, d, up)
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
			id, _ := lookup(d, "_id")
			filter := delta.Filter
			if idOnly {
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
			g.add(idOf(raw))
		}
	}
	return models, ids
}

// bulk runs an unordered bulk write and returns how many filters matched.
// FerretDB fails a whole bulk write when one statement fails and reports
// no counts; the statements are then run one by one to know.
func (r *Runner) bulk(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) (int64, error) {
	// Transient failures (a failover, a lost connection) are retried as a
	// whole: every write sets absolute values under a filter, so a repeat
	// changes nothing more.
	var res *mongo.BulkWriteResult
	err := retryTransient(ctx, func() (err error) {
		if err := fence(ctx); err != nil {
			return err // the backfill lease may have expired: write nothing
		}
		res, err = coll.BulkWrite(context.WithoutCancel(ctx), models, options.BulkWrite().SetOrdered(false))
		return err
	})
	if err == nil {
		return res.MatchedCount, nil
	}
	if transient(err) {
		return 0, fmt.Errorf("write a batch of %s: %w; nothing is lost: run backfill again, it resumes from the checkpoint", coll.Name(), err)
	}
	var matched int64
	for _, m := range models {
		u := m.(*mongo.UpdateOneModel)
		one, err := coll.UpdateOne(context.WithoutCancel(ctx), u.Filter, u.Update)
		if err != nil {
			id, _ := lookup(u.Filter.(bson.D), "_id")
			raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
			return matched, fmt.Errorf("write the upgraded %s document _id=%s: %w; the document is unchanged: fix it (or the upgrade steps) and run backfill again, it resumes from the checkpoint",
				coll.Name(), idOf(raw), err)
		}
		matched += one.MatchedCount
	}
	return matched, nil
}
