package versioned

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The methods of this file have no version semantics of their own: they
// are the driver's, on the documents as stored. A filter is matched
// against the stored shape of each document (a filter on a field an
// upgrade moves finds only the documents already upgraded); run a
// backfill first where that matters.

// Clone is mongo.Collection.Clone (another read preference, write
// concern...), wrapped with the same registry and options. The clone
// shares the original's counters and deferred queue: its deferred
// write-backs are sent through the original's collection, and closing
// either closes the queue.
func (c *Collection) Clone(opts ...options.Lister[options.CollectionOptions]) *Collection {
	clone := *c
	clone.coll = c.coll.Clone(opts...)
	return &clone
}

// Database is mongo.Collection.Database.
func (c *Collection) Database() *mongo.Database { return c.coll.Database() }

// DeleteOne is mongo.Collection.DeleteOne: a document of any version
// whose stored shape matches filter is deleted.
func (c *Collection) DeleteOne(ctx context.Context, filter any, opts ...options.Lister[options.DeleteOneOptions]) (*mongo.DeleteResult, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	return c.coll.DeleteOne(ctx, filter, opts...)
}

// DeleteMany is mongo.Collection.DeleteMany, as DeleteOne.
func (c *Collection) DeleteMany(ctx context.Context, filter any, opts ...options.Lister[options.DeleteManyOptions]) (*mongo.DeleteResult, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	return c.coll.DeleteMany(ctx, filter, opts...)
}

// FindOneAndDelete is mongo.Collection.FindOneAndDelete; the document
// it returns is upgraded when decoded (never written back: it is gone).
func (c *Collection) FindOneAndDelete(ctx context.Context, filter any, opts ...options.Lister[options.FindOneAndDeleteOptions]) *SingleResult {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return &SingleResult{err: err}
	}
	return &SingleResult{sr: c.coll.FindOneAndDelete(ctx, filter, opts...), c: c, ctx: ctx}
}

// CountDocuments is mongo.Collection.CountDocuments: documents of every
// version whose stored shape matches filter.
func (c *Collection) CountDocuments(ctx context.Context, filter any, opts ...options.Lister[options.CountOptions]) (int64, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return 0, err
	}
	return c.coll.CountDocuments(ctx, filter, opts...)
}

// EstimatedDocumentCount is mongo.Collection.EstimatedDocumentCount.
func (c *Collection) EstimatedDocumentCount(ctx context.Context, opts ...options.Lister[options.EstimatedDocumentCountOptions]) (int64, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return 0, err
	}
	return c.coll.EstimatedDocumentCount(ctx, opts...)
}

// Distinct is mongo.Collection.Distinct: the values as stored, of every
// version (a field an upgrade adds, moves or reshapes is seen only in
// the documents already upgraded). For the values of today's shape read
// the documents through Find.
func (c *Collection) Distinct(ctx context.Context, fieldName string, filter any, opts ...options.Lister[options.DistinctOptions]) *mongo.DistinctResult {
	return c.coll.Distinct(ctx, fieldName, filter, opts...)
}

// Aggregate is mongo.Collection.Aggregate, and returns the driver's
// cursor: the pipeline runs on the documents as stored, of every
// version, and its results are not upgraded. When each result is a whole
// stored document (a pipeline of $match, $sort, $skip, $limit, $sample
// stages, or one that keeps the version field and every field the
// upgrades read), [Collection.UpgradeCursor] upgrades them as Find does.
func (c *Collection) Aggregate(ctx context.Context, pipeline any, opts ...options.Lister[options.AggregateOptions]) (*mongo.Cursor, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	return c.coll.Aggregate(ctx, pipeline, opts...)
}

// UpgradeCursor wraps cur, a cursor over documents of this collection
// read some other way (Aggregate, Unwrap().Find), in a [Cursor] that
// upgrades each document in Next, as Find's does. Its documents are never
// written back: a reshaped result is not the stored document, and
// writing its upgrade back would stamp the stored one current with the
// fields the pipeline left out never upgraded. A result without the
// version field reads as version 0.
func (c *Collection) UpgradeCursor(cur *mongo.Cursor) *Cursor {
	return &Cursor{cur: cur, c: c}
}

// Watch is mongo.Collection.Watch: change events carry documents as
// stored (fullDocument of an older version is not upgraded); decode each
// with a collection built with [Never] through [Collection.Decode].
func (c *Collection) Watch(ctx context.Context, pipeline any, opts ...options.Lister[options.ChangeStreamOptions]) (*mongo.ChangeStream, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	return c.coll.Watch(ctx, pipeline, opts...)
}

// Indexes is mongo.Collection.Indexes. mongomig's migrations declare the
// indexes of a versioned collection: create them there, so that `up`
// and the ledger know them.
func (c *Collection) Indexes() mongo.IndexView { return c.coll.Indexes() }

// SearchIndexes is mongo.Collection.SearchIndexes.
func (c *Collection) SearchIndexes() mongo.SearchIndexView { return c.coll.SearchIndexes() }

// Drop is mongo.Collection.Drop.
func (c *Collection) Drop(ctx context.Context, opts ...options.Lister[options.DropCollectionOptions]) error {
	return c.coll.Drop(ctx, opts...)
}
