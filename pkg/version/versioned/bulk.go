package versioned

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// BulkWrite is mongo.Collection.BulkWrite with each model given the
// semantics of the method it stands for, and sent as one bulk write (in
// the options' order, ordered or not):
//
//   - InsertOneModel and ReplaceOneModel: the document is stamped (and
//     validated, with [WithValidation]), as InsertOne and ReplaceOne do;
//   - UpdateOneModel and UpdateManyModel: the update applies only to
//     documents at the current version; before the bulk write is sent,
//     the documents not at the current version that each filter matches
//     (the first in sort order, for an UpdateOneModel) are upgraded and
//     written back, as UpdateMany does (a *ConflictError or an upgrade's
//     error stops the call, nothing sent); an upsert is stamped, an update
//     that writes the step marker refused;
//   - DeleteOneModel and DeleteManyModel: sent as they are.
//
// The models the caller passed are not modified. Unlike UpdateOne, an
// update model cannot retry on its own: a document an older release
// writes whole between the upgrade and the bulk write is skipped (not in
// MatchedCount), and an upsert model whose document that was then
// inserts a new one, as concurrent upserts may on any server (a unique
// index on the filter's fields prevents both).
func (c *Collection) BulkWrite(ctx context.Context, models []mongo.WriteModel, opts ...options.Lister[options.BulkWriteOptions]) (*mongo.BulkWriteResult, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	out := make([]mongo.WriteModel, len(models))
	var before []func() error // the upgrades to run before sending
	for i, m := range models {
		var err error
		out[i], err = c.bulkModel(ctx, m, &before)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", i, err)
		}
	}
	for _, upgrade := range before {
		if err := upgrade(); err != nil {
			return nil, err
		}
	}
	return c.coll.BulkWrite(ctx, out, opts...)
}

// bulkModel is the model to send for m, and adds to before the upgrade
// it needs first.
func (c *Collection) bulkModel(ctx context.Context, m mongo.WriteModel, before *[]func() error) (mongo.WriteModel, error) {
	switch m := m.(type) {
	case *mongo.InsertOneModel:
		d, err := c.prepare(m.Document)
		if err != nil {
			return nil, err
		}
		cp := *m
		cp.Document = d
		return &cp, nil
	case *mongo.ReplaceOneModel:
		d, err := c.prepare(m.Replacement)
		if err != nil {
			return nil, err
		}
		cp := *m
		cp.Replacement = d
		return &cp, nil
	case *mongo.UpdateOneModel:
		cp := *m
		update, err := c.bulkUpdate(m.Filter, m.Update, m.Upsert)
		if err != nil || c.current == 0 {
			cp.Update = update
			return &cp, err
		}
		cp.Filter, cp.Update = c.currentFilter(m.Filter), update
		*before = append(*before, func() error { return c.upgradeMatching(ctx, m.Filter, m.Sort, m.Collation, 1) })
		return &cp, nil
	case *mongo.UpdateManyModel:
		cp := *m
		update, err := c.bulkUpdate(m.Filter, m.Update, m.Upsert)
		if err != nil || c.current == 0 {
			cp.Update = update
			return &cp, err
		}
		cp.Filter, cp.Update = c.currentFilter(m.Filter), update
		*before = append(*before, func() error { return c.upgradeMatching(ctx, m.Filter, nil, m.Collation, 0) })
		return &cp, nil
	}
	return m, nil // deletes, and what the driver refuses itself
}

// bulkUpdate checks an update model's update and stamps an upsert.
func (c *Collection) bulkUpdate(filter, update any, upsert *bool) (any, error) {
	if err := c.checkUpdate(update); err != nil {
		return nil, err
	}
	if upsert != nil && *upsert {
		return c.stampUpsert(filter, update)
	}
	return update, nil
}
