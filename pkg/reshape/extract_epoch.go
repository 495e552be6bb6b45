package reshape

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// The epoch of an extracted array (rule 4 of the package doc): stamped on
// a parent before child _ids are derived from its array, new at each
// guarded update that removes an element without an _id.

// needsEpoch reports whether child _ids of doc's array need an epoch the
// parent does not have (rule 4): an element without an _id beyond the
// kept ones.
func needsEpoch(x *migration.Extract, doc bson.Raw) bool {
	if Epoch(doc, x.Array).Type != 0 {
		return false
	}
	arr, ok := doc.Lookup(splitPath(x.Array)...).ArrayOK()
	if !ok {
		return false
	}
	vals, _ := arr.Values()
	for i, v := range vals {
		if i >= kept(x) && hasHashID(v) {
			return true
		}
	}
	return false
}

// stampBatch gives the parents of a batch that need an epoch one (rule
// 4), then reads them again: child _ids are derived only from a parent
// read with the epoch it holds. replaced (the child collection held
// documents when the pass began) says a parent may have been moved before
// and replaced whole since by a writer that dropped _mongomig: those
// whose children exist get a {replaced: ObjectId} epoch instead.
func (o *operation) stampBatch(ctx context.Context, docs []bson.Raw, replaced bool) ([]bson.Raw, error) {
	x := o.op.Extract
	var ids bson.A
	for _, d := range docs {
		if needsEpoch(x, d) {
			ids = append(ids, d.Lookup("_id"))
		}
	}
	if len(ids) == 0 {
		return docs, nil
	}
	if err := o.stamp(ctx, ids, replaced); err != nil {
		return nil, err
	}
	cur, err := o.db.Collection(x.From).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(parentProjection(x)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", x.From, err)
	}
	var again []bson.Raw
	if err := cur.All(ctx, &again); err != nil {
		return nil, fmt.Errorf("read %s: %w", x.From, err)
	}
	byID := map[string]bson.Raw{}
	for _, d := range again {
		byID[idKey(d.Lookup("_id"))] = d
	}
	out := make([]bson.Raw, 0, len(docs))
	for _, d := range docs {
		if needsEpoch(x, d) {
			if d = byID[idKey(d.Lookup("_id"))]; d == nil {
				continue // gone since the read
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// stampOne stamps one parent (replaced whole between the batch's stamp
// and its move) and reads it again.
func (o *operation) stampOne(ctx context.Context, id bson.RawValue) (bson.Raw, error) {
	if err := o.stamp(ctx, bson.A{id}, true); err != nil {
		return nil, err
	}
	return o.readParent(ctx, id)
}

// stamp sets a new epoch on the parents ids that still have none (the
// field missing or null, as [Epoch] reads it): one
// ObjectId for them all (an epoch need only be new for its parent). With
// replaced, the parents that have children already (a whole-document
// replace dropped their epoch after an earlier move) get {replaced:
// ObjectId}, which marks the children derived at it (rule 4).
func (o *operation) stamp(ctx context.Context, ids bson.A, replaced bool) error {
	x := o.op.Extract
	var again bson.A
	if replaced {
		var err error
		if again, err = o.withChildren(ctx, ids); err != nil {
			return err
		}
	}
	send := func(ids bson.A, epoch any) error {
		if len(ids) == 0 {
			return nil
		}
		if err := lease.Fence(ctx); err != nil {
			return err
		}
		filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: epochPath(x.Array), Value: nil}} // missing or null
		if _, err := o.db.Collection(x.From).UpdateMany(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: epochPath(x.Array), Value: epoch}}}}); err != nil {
			if !isValidationError(err) {
				return fmt.Errorf("stamp the epoch of %s.%s (%s): %w", x.From, x.Array, epochPath(x.Array), err)
			}
			return fmt.Errorf("stamp the epoch of %s.%s (%s): %w: the validator of %s must accept documents that still hold %s, with an object %s, until the extract is done", x.From, x.Array, epochPath(x.Array), err, x.From, x.Array, EpochField)
		}
		return nil
	}
	fresh := bson.A{}
	seen := map[string]bool{}
	for _, id := range again {
		seen[idKey(id)] = true
	}
	for _, id := range ids {
		if !seen[idKey(id)] {
			fresh = append(fresh, id)
		}
	}
	if err := send(again, bson.D{{Key: "replaced", Value: bson.NewObjectID()}}); err != nil {
		return err
	}
	if err := send(fresh, bson.NewObjectID()); err != nil {
		return err
	}
	o.hook("reshape.stamp", int(o.p.Moved))
	return nil
}

// withChildren are those of parents ids that have a child with a {parent,
// hash, n} _id.
func (o *operation) withChildren(ctx context.Context, ids bson.A) (bson.A, error) {
	x := o.op.Extract
	cur, err := o.db.Collection(x.To).Find(ctx, bson.D{{Key: x.Ref, Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "_id.hash", Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: x.Ref, Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the %s of %s: %w", x.To, x.From, err)
	}
	var kids []bson.Raw
	if err := cur.All(ctx, &kids); err != nil {
		return nil, fmt.Errorf("read the %s of %s: %w", x.To, x.From, err)
	}
	var out bson.A
	seen := map[string]bool{}
	for _, k := range kids {
		ref := k.Lookup(x.Ref)
		if !seen[idKey(ref)] {
			seen[idKey(ref)] = true
			out = append(out, ref)
		}
	}
	return out, nil
}

// advanceEpoch adds to update, which removes vals[kept(x):] from the
// parent doc, the $set of a new epoch when one of them has no _id, so an
// equal element appended later gets a child _id of its own (rule 4); and
// the $unset of a down's record of what it embedded back (rule 8), which
// no longer describes the array.
func advanceEpoch(x *migration.Extract, doc bson.Raw, vals []bson.RawValue, update bson.D) bson.D {
	for _, v := range vals[kept(x):] {
		if hasHashID(v) {
			update = addTo(update, "$set", epochPath(x.Array), bson.NewObjectID())
			break
		}
	}
	if doc.Lookup(splitPath(embeddedPath(x.Array))...).Type != 0 {
		update = addTo(update, "$unset", embeddedPath(x.Array), "")
	}
	return update
}

// noteReplaced adds to the summary how many children were made at a
// {replaced} epoch (rule 4): a whole-document replace had dropped their
// parent's _mongomig after an earlier move, so each element it wrote was
// moved as new, and one it wrote back from a copy read before that move
// is now a second child.
func (o *operation) noteReplaced(ctx context.Context) error {
	x := o.op.Extract
	n, err := o.db.Collection(x.To).CountDocuments(ctx, bson.D{{Key: "_id.e.replaced", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil {
		return fmt.Errorf("count the %s made after a replace: %w", x.To, err)
	}
	if n > 0 {
		o.summary += fmt.Sprintf("; %d of them were written back by a whole-document replace that dropped %s (find them with {\"_id.e.replaced\": {$exists: true}}): one equal to an earlier child of the same %s may be its duplicate", n, EpochField, x.Ref)
	}
	return nil
}

// isValidationError reports whether err is the server's "Document failed
// validation" (code 121).
func isValidationError(err error) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && se.HasErrorCode(121)
}
