package versioned

import (
	"bytes"
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
)

// Collection is a *mongo.Collection whose reads upgrade each document to
// the current version before decoding it, and whose whole-document writes
// stamp the current version. Build it once per collection with [New] and
// share it: it is safe for concurrent use.
type Collection struct {
	coll     *mongo.Collection
	reg      *version.Registry
	name     string
	current  int64
	policy   Policy
	deferred DeferredOptions
	validate bool
	observer Observer
	registry *bson.Registry
	bsonOpts *options.BSONOptions
	stats    *counters
	queue    *queue // nil unless the policy is Deferred
	gate     Gate   // nil: write-backs are never held (gate.go)
}

// Option configures [New].
type Option func(*Collection)

// WithWriteBack chooses what happens to an upgrade once it is served:
// [Never] (the default), [Sync] or [Deferred] (see [WithDeferred] for
// the queue's bounds).
func WithWriteBack(p Policy) Option { return func(c *Collection) { c.policy = p } }

// WithDeferred sets the deferred queue's bounds and selects the
// [Deferred] policy.
func WithDeferred(o DeferredOptions) Option {
	return func(c *Collection) { c.policy, c.deferred = Deferred, o }
}

// WithValidation makes InsertOne, InsertMany, ReplaceOne and
// FindOneAndReplace check each document against the collection's current
// validator ([version.Registry.Validate]) before sending it: for servers
// that do not enforce validators. A failure is a *version.InvalidError
// and nothing is sent.
func WithValidation() Option { return func(c *Collection) { c.validate = true } }

// WithObserver receives upgrade and write-back events (see [Event]).
func WithObserver(o Observer) Option { return func(c *Collection) { c.observer = o } }

// WithRegistry and WithBSONOptions give the registry and BSON options the
// client (or collection) was configured with, if not the driver's
// defaults: an upgraded document read through FindOne or a
// findAndModify, or passed to [Collection.Decode], is decoded with them,
// and a document to write is encoded with the registry before it is
// stamped.
// Cursors decode with the driver's own configuration either way, and so
// does every document that needed no upgrade.
func WithRegistry(r *bson.Registry) Option { return func(c *Collection) { c.registry = r } }

// WithBSONOptions: see [WithRegistry].
func WithBSONOptions(o *options.BSONOptions) Option {
	return func(c *Collection) { c.bsonOpts = o }
}

// New wraps coll; reg knows its upgrades by the collection's name. A
// collection no migration names (a typo) makes every read and write fail
// with a *version.UnknownCollectionError unless the registry declares it.
// With the [Deferred] policy New starts the queue's goroutine: call
// [Collection.Close] before disconnecting.
func New(coll *mongo.Collection, reg *version.Registry, opts ...Option) *Collection {
	c := &Collection{coll: coll, reg: reg, name: coll.Name(), stats: &counters{}}
	for _, o := range opts {
		o(c)
	}
	c.current = reg.Current(c.name)
	if c.policy == Deferred {
		c.queue = startQueue(c, c.deferred.withDefaults())
	}
	return c
}

// Unwrap returns the underlying collection. Documents read through it
// are not upgraded: decode them with [Collection.Decode]. A partial
// update ($set) sent through it to a document still at an older version
// mixes two shapes: use the wrapper's updates (which upgrade it first),
// or filter the update on the current version.
func (c *Collection) Unwrap() *mongo.Collection { return c.coll }

// Name is the collection's name.
func (c *Collection) Name() string { return c.coll.Name() }

// Stats returns the counters since New.
func (c *Collection) Stats() Stats { return c.stats.snapshot() }

// Close flushes the deferred queue (if any) and stops its goroutine. ctx
// bounds Close: when it ends, the bulk write in flight is abandoned and
// nothing more is sent. Every write-back accepted before Close that it
// could not write (ctx ended, or the server failed it after the bounded
// retries of a timeout) is in the *UnwrittenError it returns (wrapping
// ctx's error, the server's, or both), never silently dropped; those
// documents keep their stored version. Reads still work after Close;
// their write-backs are dropped (and counted). Close is idempotent (it
// returns the first call's result) and a no-op without the Deferred
// policy.
func (c *Collection) Close(ctx context.Context) error {
	if c.queue == nil {
		return nil
	}
	return c.queue.close(ctx)
}

// Decode upgrades raw, a document of this collection read some other way
// (an aggregation, a change stream, Unwrap), and decodes it into v. An
// upgraded document is written back according to the policy, with ctx:
// raw must then be the whole document as stored. A document an
// aggregation reshaped ($project, $unset, $set) upgrades to something
// other than the stored document's upgrade, and writing that back would
// stamp the stored document current with the fields it lacked never
// upgraded: decode those with a collection built with [Never].
func (c *Collection) Decode(ctx context.Context, raw bson.Raw, v any) error {
	up, _, err := c.upgrade(ctx, raw, true, true)
	if err != nil {
		return err
	}
	return c.unmarshal(up, v)
}

// upgrade returns raw at the current version. A current document is
// returned as is, without a copy; an older one is reported and written
// back as the policy says (writeBack false: never). owned says whether
// raw may be kept after the call (false: a cursor's buffer).
func (c *Collection) upgrade(ctx context.Context, raw bson.Raw, writeBack, owned bool) (bson.Raw, bool, error) {
	up, changed, err := c.reg.UpgradeRaw(c.name, raw)
	if err != nil || !changed {
		return up, false, err
	}
	c.upgraded(ctx, raw, up, writeBack, owned)
	return up, true, nil
}

// unmarshal decodes an upgraded document with the configured registry
// and options, or with bson.Unmarshal (the driver's default registry).
func (c *Collection) unmarshal(raw bson.Raw, v any) error {
	if c.registry == nil && c.bsonOpts == nil {
		return bson.Unmarshal(raw, v)
	}
	dec := bson.NewDecoder(bson.NewDocumentReader(bytes.NewReader(raw)))
	if c.registry != nil {
		dec.SetRegistry(c.registry)
	}
	applyBSONOptions(dec, c.bsonOpts)
	return dec.Decode(v)
}

// applyBSONOptions sets on dec what the driver's cursors set from the same
// options (mongo.Cursor's decoder).
func applyBSONOptions(dec *bson.Decoder, o *options.BSONOptions) {
	if o == nil {
		return
	}
	for _, set := range []struct {
		on bool
		fn func()
	}{
		{o.AllowTruncatingDoubles, dec.AllowTruncatingDoubles},
		{o.BinaryAsSlice, dec.BinaryAsSlice},
		{o.DefaultDocumentM, dec.DefaultDocumentM},
		{o.DefaultDocumentMap, dec.DefaultDocumentMap},
		{o.ObjectIDAsHexString, dec.ObjectIDAsHexString},
		{o.UseJSONStructTags, dec.UseJSONStructTags},
		{o.UseLocalTimeZone, dec.UseLocalTimeZone},
		{o.ZeroMaps, dec.ZeroMaps},
		{o.ZeroStructs, dec.ZeroStructs},
	} {
		if set.on {
			set.fn()
		}
	}
}

// event reports e to the observer, if any.
func (c *Collection) event(e Event) {
	if c.observer != nil {
		e.Collection = c.name
		c.observer(e)
	}
}

// idOf is raw's _id, for events and errors.
func idOf(raw bson.Raw) any {
	v, err := raw.LookupErr("_id")
	if err != nil {
		return nil
	}
	var id any
	if err := v.Unmarshal(&id); err != nil {
		return v
	}
	return id
}
