package versioned

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// InsertOne is mongo.Collection.InsertOne with doc (a struct, bson.D,
// bson.M, bson.Raw...) stamped with the current version, and validated
// first with [WithValidation].
func (c *Collection) InsertOne(ctx context.Context, doc any, opts ...options.Lister[options.InsertOneOptions]) (*mongo.InsertOneResult, error) {
	d, err := c.prepare(doc)
	if err != nil {
		return nil, err
	}
	return c.coll.InsertOne(ctx, d, opts...)
}

// InsertMany is mongo.Collection.InsertMany with every document stamped
// (and validated, with [WithValidation]); nothing is sent if one fails.
func (c *Collection) InsertMany(ctx context.Context, docs any, opts ...options.Lister[options.InsertManyOptions]) (*mongo.InsertManyResult, error) {
	v := reflect.ValueOf(docs)
	if v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("%s: InsertMany takes a slice, not %T", c.name, docs)
	}
	out := make([]any, v.Len())
	for i := range out {
		d, err := c.prepare(v.Index(i).Interface())
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out[i] = d
	}
	return c.coll.InsertMany(ctx, out, opts...)
}

// ReplaceOne is mongo.Collection.ReplaceOne with the replacement stamped
// (and validated, with [WithValidation]): a replacement without the
// version field would read as version 0 and be upgraded again.
func (c *Collection) ReplaceOne(ctx context.Context, filter, replacement any, opts ...options.Lister[options.ReplaceOptions]) (*mongo.UpdateResult, error) {
	d, err := c.prepare(replacement)
	if err != nil {
		return nil, err
	}
	return c.coll.ReplaceOne(ctx, filter, d, opts...)
}

// prepare turns a document to write whole into bson.D, stamped with the
// current version and, with WithValidation, checked against the current
// validator.
func (c *Collection) prepare(doc any) (bson.D, error) {
	var d bson.D
	switch x := doc.(type) {
	case bson.D:
		d = x
	default:
		raw, ok := doc.(bson.Raw)
		if !ok {
			var err error
			if raw, err = c.marshal(doc); err != nil {
				return nil, fmt.Errorf("%s: encode document: %w", c.name, err)
			}
		}
		if err := bson.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("%s: decode document: %w", c.name, err)
		}
	}
	d, err := c.reg.Stamp(c.name, d)
	if err != nil {
		return nil, err // *version.UnknownCollectionError
	}
	if c.validate {
		if err := c.reg.Validate(c.name, d); err != nil {
			return nil, err // *version.InvalidError
		}
	}
	return d, nil
}

// marshal encodes doc with the configured registry, or the driver's
// default one.
func (c *Collection) marshal(doc any) (bson.Raw, error) {
	if c.registry == nil {
		return bson.Marshal(doc)
	}
	var buf bytes.Buffer
	enc := bson.NewEncoder(bson.NewDocumentWriter(&buf))
	enc.SetRegistry(c.registry)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// stampUpsert adds $setOnInsert of the current version to an update
// document that names no version field path in any operator. Other forms
// (a pipeline) are returned as they are. A filter that names the step
// marker is refused: an upsert copies its equalities into the document
// it inserts.
func (c *Collection) stampUpsert(filter, update any) (any, error) {
	if f, err := operandFields(filter); err == nil {
		for _, e := range f {
			if isMarker(e.Key) {
				return nil, fmt.Errorf("%s: the upsert's filter names %q, mongomig's backfill marker, which the document it inserts would carry: remove it from the filter", c.name, e.Key)
			}
		}
	}
	var d bson.D
	switch u := update.(type) {
	case bson.D:
		d = u
	case bson.M:
		d = make(bson.D, 0, len(u))
		for k, v := range u {
			d = append(d, bson.E{Key: k, Value: v})
		}
	case bson.Raw:
		if err := bson.Unmarshal(u, &d); err != nil {
			return nil, fmt.Errorf("%s: decode update: %w", c.name, err)
		}
	default:
		return update, nil
	}
	field := c.reg.Field()
	stamp, err := c.reg.Stamp(c.name, nil)
	if err != nil {
		return nil, err // *version.UnknownCollectionError
	}
	out := make(bson.D, 0, len(d)+1)
	onInsert := -1
	for _, e := range d {
		if len(e.Key) == 0 || e.Key[0] != '$' {
			return update, nil // a replacement: the driver refuses it
		}
		fields, err := operand(e.Value)
		if err != nil {
			return update, nil // not a document: the server says why
		}
		for _, f := range fields {
			if f.Key == field || strings.HasPrefix(f.Key, field+".") {
				return update, nil // the application sets it itself
			}
		}
		if e.Key == "$setOnInsert" {
			onInsert = len(out)
			e.Value = append(fields[:len(fields):len(fields)], stamp...)
		}
		out = append(out, e)
	}
	if onInsert < 0 {
		out = append(out, bson.E{Key: "$setOnInsert", Value: stamp})
	}
	return out, nil
}

// operand is an update operator's document as bson.D.
func operand(v any) (bson.D, error) {
	switch o := v.(type) {
	case bson.D:
		return o, nil
	case bson.M:
		d := make(bson.D, 0, len(o))
		for k, x := range o {
			d = append(d, bson.E{Key: k, Value: x})
		}
		return d, nil
	}
	raw, err := bson.Marshal(v)
	if err != nil {
		return nil, err
	}
	var d bson.D
	err = bson.Unmarshal(raw, &d)
	return d, err
}
