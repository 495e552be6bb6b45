package versioned

import (
	"context"
	"fmt"
	"reflect"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// FindOne is mongo.Collection.FindOne; the result upgrades the document
// before Decode or Raw return it. A projection must keep the version
// field: a document without it reads as version 0. A projected document
// is never written back: its upgrade is not the stored document's (a
// step on a field it left out did nothing).
func (c *Collection) FindOne(ctx context.Context, filter any, opts ...options.Lister[options.FindOneOptions]) *SingleResult {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return &SingleResult{err: err}
	}
	whole := listed(opts).Projection == nil
	return &SingleResult{sr: c.coll.FindOne(ctx, filter, opts...), c: c, ctx: ctx, writeBack: whole}
}

// listed is the options opts set, as the driver reads them
// (mongoutil.NewOptions: a nil or typed-nil lister and a nil setter are
// skipped).
func listed[T any](opts []options.Lister[T]) *T {
	o := new(T)
	for _, l := range opts {
		if l == nil || reflect.ValueOf(l).IsNil() {
			continue
		}
		for _, set := range l.List() {
			if set != nil {
				_ = set(o) // the driver reports a setter's error when it runs the operation
			}
		}
	}
	return o
}

// FindOneAndReplace is mongo.Collection.FindOneAndReplace with the
// replacement stamped (and validated, with [WithValidation]) as in
// ReplaceOne. The document it returns is upgraded when decoded, never
// written back: the replacement is already current.
func (c *Collection) FindOneAndReplace(ctx context.Context, filter, replacement any, opts ...options.Lister[options.FindOneAndReplaceOptions]) *SingleResult {
	doc, err := c.prepare(replacement)
	if err != nil {
		return &SingleResult{err: err}
	}
	return &SingleResult{sr: c.coll.FindOneAndReplace(ctx, filter, doc, opts...), c: c, ctx: ctx}
}

// Find is mongo.Collection.Find; the cursor upgrades each document. As
// with FindOne, projected documents are never written back.
func (c *Collection) Find(ctx context.Context, filter any, opts ...options.Lister[options.FindOptions]) (*Cursor, error) {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return nil, err
	}
	whole := listed(opts).Projection == nil
	cur, err := c.coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, err
	}
	return &Cursor{cur: cur, c: c, writeBack: whole}, nil
}

// SingleResult is mongo.SingleResult for one document of a versioned
// collection: Decode and Raw see it at the current version.
type SingleResult struct {
	sr        *mongo.SingleResult
	c         *Collection
	ctx       context.Context
	writeBack bool

	done    bool
	raw     bson.Raw
	changed bool
	err     error
}

// resolve reads and upgrades the document once.
func (r *SingleResult) resolve() {
	if r.done {
		return
	}
	r.done = true
	if r.err != nil {
		return
	}
	raw, err := r.sr.Raw()
	if err != nil {
		r.err = err
		return
	}
	r.raw, r.changed, r.err = r.c.upgrade(r.ctx, raw, r.writeBack, true)
}

// Decode upgrades the document, then decodes it into v. It returns the
// driver's errors (mongo.ErrNoDocuments among them), a
// *version.TooNewError for a document newer than the registry knows and
// a *version.UpgradeError for one a step cannot transform; v is left
// alone then. A current document is decoded by the driver, as
// mongo.SingleResult.Decode does, without a copy.
func (r *SingleResult) Decode(v any) error {
	r.resolve()
	switch {
	case r.err != nil:
		return r.err
	case !r.changed:
		return r.sr.Decode(v)
	}
	return r.c.unmarshal(r.raw, v)
}

// Raw returns the document at the current version.
func (r *SingleResult) Raw() (bson.Raw, error) {
	r.resolve()
	return r.raw, r.err
}

// Err is the error Decode would return, without decoding.
func (r *SingleResult) Err() error {
	r.resolve()
	return r.err
}

// Cursor is mongo.Cursor over a versioned collection: Next upgrades each
// document, Current holds it at the current version, Decode and All
// decode it with the driver's decoder.
type Cursor struct {
	// Current is the current document at the current version, valid until
	// the next call to Next. It is nil when the document could not be
	// upgraded: Decode returns why.
	Current bson.Raw

	cur       *mongo.Cursor
	c         *Collection
	writeBack bool
	docErr    error
	up        bool
}

// Next advances to the next document and upgrades it. A document that
// cannot be upgraded (too new, a failing step) does not stop the
// iteration: Decode returns its error, and the caller decides whether to
// skip it.
func (cu *Cursor) Next(ctx context.Context) bool { return cu.step(ctx, cu.cur.Next(ctx)) }

// TryNext is mongo.Cursor.TryNext, upgrading as Next does.
func (cu *Cursor) TryNext(ctx context.Context) bool { return cu.step(ctx, cu.cur.TryNext(ctx)) }

func (cu *Cursor) step(ctx context.Context, ok bool) bool {
	cu.Current, cu.docErr, cu.up = nil, nil, false
	if !ok {
		return false
	}
	raw := cu.cur.Current
	cu.Current, cu.up, cu.docErr = cu.c.upgrade(ctx, raw, cu.writeBack, false)
	if cu.docErr != nil {
		cu.Current = nil
	}
	return true
}

// Decode decodes the current document, upgraded, into v with the
// driver's decoder (the client's registry and BSON options), or returns
// the error that kept it from being upgraded.
func (cu *Cursor) Decode(v any) error {
	if cu.docErr != nil {
		return cu.docErr
	}
	if cu.up {
		// The driver's decoder reads Current: give it the upgraded
		// document (Next replaces it anyway).
		cu.cur.Current = cu.Current
	}
	return cu.cur.Decode(v)
}

// All decodes every remaining document into results, a pointer to a
// slice, and closes the cursor. It stops at the first document that
// cannot be upgraded or decoded and returns its error.
func (cu *Cursor) All(ctx context.Context, results any) error {
	defer cu.cur.Close(context.Background())
	rv := reflect.ValueOf(results)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("results argument must be a pointer to a slice, not %T", results)
	}
	slice := rv.Elem()
	out := slice.Slice(0, 0)
	for cu.Next(ctx) {
		elem := reflect.New(slice.Type().Elem())
		if err := cu.Decode(elem.Interface()); err != nil {
			return err
		}
		out = reflect.Append(out, elem.Elem())
	}
	if err := cu.cur.Err(); err != nil {
		return err
	}
	slice.Set(out)
	return nil
}

// Err is mongo.Cursor.Err: the last error of the cursor itself.
func (cu *Cursor) Err() error { return cu.cur.Err() }

// Close is mongo.Cursor.Close.
func (cu *Cursor) Close(ctx context.Context) error { return cu.cur.Close(ctx) }

// ID is mongo.Cursor.ID.
func (cu *Cursor) ID() int64 { return cu.cur.ID() }

// RemainingBatchLength is mongo.Cursor.RemainingBatchLength.
func (cu *Cursor) RemainingBatchLength() int { return cu.cur.RemainingBatchLength() }
