package versioned

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

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
