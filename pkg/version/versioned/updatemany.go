package versioned

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// upgradeBatch is how many guarded updates one bulk write of
// upgradeMatching carries (the sandbox hangs from 100).
const upgradeBatch = 50

// UpdateByID is mongo.Collection.UpdateByID: [Collection.UpdateOne] with
// a filter on _id.
func (c *Collection) UpdateByID(ctx context.Context, id, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	if id == nil {
		return nil, mongo.ErrNilValue
	}
	return c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, update, opts...)
}

// UpdateMany is mongo.Collection.UpdateMany on documents at the current
// version only, so that a partial update never mixes two shapes (see
// [Collection.FindOneAndUpdate]). It cannot upgrade each document just
// before the server updates it, so it upgrades first, then updates:
//
//  1. every document below (or above) the current version that matches
//     filter is read, upgraded and written back (guarded updates, in
//     unordered bulk writes of 50, whatever the write-back policy); one
//     another writer changed since the read is read again, for at most
//     three more rounds (then a *ConflictError, and nothing of the
//     update is applied); one that cannot be upgraded (a
//     *version.TooNewError, a *version.UpgradeError) stops the call
//     with its error, and nothing of the update is applied;
//  2. the update is sent once, with filter restricted to the current
//     version: it applies at most once to each document, and only to
//     today's shape.
//
// A document an older release writes whole (without the version field)
// between the two steps is at version 0 again: the update skips it and
// MatchedCount does not count it, as the server's own UpdateMany may
// miss a document written during it. A collection already backfilled
// costs one more round trip than the driver's call (the query that finds
// no older document). The filter is matched against the stored shapes,
// as in UpdateOne. Upserts are stamped and the step marker refused, as
// in UpdateOne.
func (c *Collection) UpdateMany(ctx context.Context, filter, update any, opts ...options.Lister[options.UpdateManyOptions]) (*mongo.UpdateResult, error) {
	if err := c.checkUpdate(update); err != nil {
		return nil, err
	}
	o := listed(opts)
	if o.Upsert != nil && *o.Upsert {
		var err error
		if update, err = c.stampUpsert(filter, update); err != nil {
			return nil, err
		}
	}
	if c.current == 0 {
		return c.coll.UpdateMany(ctx, filter, update, opts...)
	}
	if err := c.upgradeMatching(ctx, filter, nil, o.Collation, 0); err != nil {
		return nil, err
	}
	return c.coll.UpdateMany(ctx, c.currentFilter(filter), update, opts...)
}

// upgradeMatching upgrades and writes back the documents not at the
// current version that match filter: at most limit of them (0: all), in
// sort order. A round reads them with one query and writes them back in
// unordered bulk writes of guarded updates; when some lose (another
// writer changed them since the read), another round reads what is still
// old, at most maxUpgradeTries more, then a *ConflictError.
func (c *Collection) upgradeMatching(ctx context.Context, filter, sort any, collation *options.Collation, limit int64) error {
	notCurrent := bson.D{{Key: "$and", Value: bson.A{orEmpty(filter), c.reg.VersionNot(c.current)}}}
	find := options.Find()
	if sort != nil {
		find.SetSort(sort)
	}
	if collation != nil {
		find.SetCollation(collation)
	}
	if limit > 0 {
		find.SetLimit(limit)
	}
	for round := 0; ; round++ {
		found, lost, err := c.upgradeRound(ctx, notCurrent, find)
		switch {
		case err != nil:
			return err
		case found == 0 || lost == 0:
			return nil
		case round == maxUpgradeTries:
			return &ConflictError{Collection: c.name, Tries: round + 1}
		}
	}
}

// upgradeRound is one round of upgradeMatching: how many documents it
// upgraded and how many of their write-backs lost.
func (c *Collection) upgradeRound(ctx context.Context, filter bson.D, find *options.FindOptionsBuilder) (found, lost int64, err error) {
	cur, err := c.coll.Find(ctx, filter, find)
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close(ctx)
	var models []mongo.WriteModel
	flush := func() error {
		if len(models) == 0 {
			return nil
		}
		res, err := c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			c.stats.failed.Add(int64(len(models)))
			c.event(Event{Kind: Failed, Count: len(models), Err: err})
			return err
		}
		c.stats.written.Add(res.MatchedCount)
		c.stats.lost.Add(int64(len(models)) - res.MatchedCount)
		lost += int64(len(models)) - res.MatchedCount
		c.event(Event{Kind: Flushed, Count: len(models), Matched: int(res.MatchedCount)})
		models = models[:0]
		return nil
	}
	for cur.Next(ctx) {
		up, changed, err := c.reg.UpgradeRaw(c.name, cur.Current)
		if err != nil {
			return found, lost, err // *version.TooNewError, *version.UpgradeError
		}
		if !changed {
			continue
		}
		d, err := c.delta(ctx, item{before: cur.Current, after: up})
		if err != nil {
			return found, lost, err
		}
		if d.Empty() {
			continue
		}
		found++
		c.stats.upgraded.Add(1)
		models = append(models, mongo.NewUpdateOneModel().SetFilter(d.Filter).SetUpdate(d.Update))
		if len(models) == upgradeBatch {
			if err := flush(); err != nil {
				return found, lost, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return found, lost, err
	}
	return found, lost, flush()
}
