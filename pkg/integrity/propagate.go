package integrity

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
)

// Propagated is one mirror copy a [Checker.Propagate] updated.
type Propagated struct {
	Rule       string `json:"rule"`
	Collection string `json:"collection"`
	// Modified counts the documents written (those already in line are
	// not).
	Modified int64 `json:"modified"`
	// Method is "arrayFilters" (one updateMany per batch) or "client"
	// (per element, where the server has no array filters) for a copy
	// inside an array, "set" for a copy at the top.
	Method string `json:"method"`
}

// Propagate updates every mirror copy declared for the document _id id
// of collection source, after the application changed it (a class's
// credits 3 -> 4): per rule, in batches of [Options.BatchSize] documents
// in _id order, one updateMany setting only the copied field, with the
// elements of an array chosen by array filters. Each write is filtered
// on the copy differing from the value read, and sets that field alone,
// so a concurrent edit of any other field is never erased and a rerun
// writes only what is still out of line: Propagate is resumed by calling
// it again (it is idempotent). A crash midway leaves some copies behind,
// exactly what [Checker.Check] reports and [Checker.Repair] fixes. When
// the source changed again while Propagate ran, it starts over with the
// new value, so the last call to finish leaves the newest value. Snapshot
// copies are never touched.
func (c *Checker) Propagate(ctx context.Context, source string, id any) ([]Propagated, error) {
	var out []Propagated
	for _, r := range c.rules {
		cr, ok := r.(*copyRule)
		if !ok || cr.to != source || cr.cp.Mode != migration.CopyMirror {
			continue
		}
		p, err := c.propagate(ctx, cr, id)
		if err != nil {
			return out, fmt.Errorf("propagate %s _id %v to %s: %w", source, id, cr.info().Rule, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// propagate runs one rule until the source reads the same before and
// after (at most maxAttempts times).
func (c *Checker) propagate(ctx context.Context, r *copyRule, id any) (Propagated, error) {
	p := Propagated{Rule: r.info().Rule, Collection: r.coll}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		v, ok, err := c.sourceValue(ctx, r, id)
		if err != nil {
			return p, err
		}
		if err := c.propagateValue(ctx, r, id, v, ok, &p); err != nil {
			return p, err
		}
		now, nok, err := c.sourceValue(ctx, r, id)
		if err != nil || (nok == ok && (!ok || same(now, v))) {
			return p, err
		}
	}
	return p, fmt.Errorf("the source kept changing; call Propagate again")
}

// sourceValue reads the source document's field; a missing document is
// an error (a deleted source is the reference rule's business).
func (c *Checker) sourceValue(ctx context.Context, r *copyRule, id any) (bson.RawValue, bool, error) {
	raw, err := c.db.Collection(r.to).FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: r.field.From, Value: 1}})).Raw()
	if err == mongo.ErrNoDocuments {
		return bson.RawValue{}, false, fmt.Errorf("collection %q has no document _id %v", r.to, id)
	}
	if err != nil {
		return bson.RawValue{}, false, err
	}
	v, ok := lookup(raw, r.field.From)
	return v, ok, nil
}

// differs is the condition "the copy at path is not v": $ne, or $exists
// when the source field is missing. $ne on a path is also true of an
// array holding v, which is out of line too.
func differs(path string, v bson.RawValue, ok bool) bson.E {
	if !ok {
		return bson.E{Key: path, Value: bson.D{{Key: "$exists", Value: true}}}
	}
	return bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: path, Value: bson.D{{Key: "$ne", Value: val(v)}}}},
		bson.D{{Key: path, Value: bson.D{{Key: "$not", Value: bson.D{{Key: "$type", Value: int32(v.Type)}}}}}},
	}}
}

// propagateValue writes v to every copy of r naming id, batch by batch
// in _id order. A copy at the top is filtered on differing from v; one in
// an array is chosen by the array filter on its reference, and setting
// the value it already holds is no write.
func (c *Checker) propagateValue(ctx context.Context, r *copyRule, id any, v bson.RawValue, ok bool, p *Propagated) error {
	match := bson.D{{Key: r.cp.Via, Value: id}}
	if r.cp.Base() == "" {
		match = append(match, differs(r.field.Path, v, ok))
	}
	var last any
	for batch := 0; ; batch++ {
		if h := c.hook(); h != nil {
			h("integrity.propagate "+r.coll, 0, batch)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		page := match
		if last != nil {
			page = append(bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: last}}}}, match...)
		}
		ids, err := c.ids(ctx, r.coll, page)
		if err != nil || len(ids) == 0 {
			return err
		}
		last = ids[len(ids)-1]
		filter := append(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, match...)
		n, method, err := c.writeCopies(ctx, r, id, v, ok, filter)
		if err != nil {
			return err
		}
		p.Modified += n
		p.Method = method
	}
}

// ids reads the next batch of _ids matching filter.
func (c *Checker) ids(ctx context.Context, coll string, filter bson.D) (bson.A, error) {
	cur, err := c.db.Collection(coll).Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(c.opts.BatchSize)))
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var out bson.A
	for cur.Next(ctx) {
		out = append(out, cur.Current.Lookup("_id"))
	}
	return out, cur.Err()
}

// writeCopies sets (or unsets) the copy in the documents of filter: at
// the top with one updateMany; in an array with array filters, or where
// the server has none, per element.
func (c *Checker) writeCopies(ctx context.Context, r *copyRule, id any, v bson.RawValue, ok bool, filter bson.D) (int64, string, error) {
	op := func(path string) bson.D {
		if ok {
			return bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: val(v)}}}}
		}
		return bson.D{{Key: "$unset", Value: bson.D{{Key: path, Value: ""}}}}
	}
	coll := c.db.Collection(r.coll)
	base := r.cp.Base()
	if base == "" {
		res, err := coll.UpdateMany(ctx, filter, op(r.field.Path))
		if err != nil {
			return 0, "", err
		}
		return res.ModifiedCount, "set", nil
	}
	elem := bson.D{{Key: "e." + r.cp.Key(), Value: id}}
	res, err := coll.UpdateMany(ctx, filter, op(base+".$[e]."+r.field.Path),
		options.UpdateMany().SetArrayFilters([]any{elem}))
	if err == nil {
		return res.ModifiedCount, "arrayFilters", nil
	}
	if !notSupported(err) {
		// FerretDB v1 answers arrayFilters with NotImplemented.
		return 0, "", err
	}
	n, err := c.writeElements(ctx, r, id, v, ok, filter, op)
	return n, "client", err
}

// writeElements is the fallback for a server without array filters: it
// reads each document's array and sets the copy at each element naming
// id, guarded on the element's reference still being id.
func (c *Checker) writeElements(ctx context.Context, r *copyRule, id any, v bson.RawValue, ok bool, filter bson.D, op func(string) bson.D) (int64, error) {
	base := r.cp.Base()
	top, _, _ := strings.Cut(base, ".")
	var n int64
	_, err := c.batches(ctx, r.coll, filter, bson.D{{Key: top, Value: 1}}, func(docs []bson.Raw) error {
		for _, d := range docs {
			for _, b := range bases(d, base) {
				ref, rok := lookup(b.doc, r.cp.Key())
				if !rok || !sameAs(ref, id) {
					continue
				}
				cur, cok := lookup(b.doc, r.field.Path)
				if cok == ok && (!ok || same(cur, v)) {
					continue
				}
				g := bson.D{{Key: "_id", Value: d.Lookup("_id")}, guard(b.at+"."+r.cp.Key(), ref, true)}
				res, err := c.db.Collection(r.coll).UpdateOne(ctx, g, op(b.at+"."+r.field.Path))
				if err != nil {
					return err
				}
				n += res.ModifiedCount
			}
		}
		return nil
	})
	return n, err
}

// sameAs compares a stored value with the id the application passed.
func sameAs(v bson.RawValue, id any) bool {
	t, data, err := bson.MarshalValue(id)
	return err == nil && same(v, bson.RawValue{Type: t, Value: data})
}
