package reshape

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// reembed is extract's inverse (down): the documents of To go back into
// their parent's array, pass after pass until a pass moves nothing (rules
// 8-10 of the package doc).
func (o *operation) reembed(ctx context.Context) error {
	x := o.op.Extract
	if o.p.Pass == 0 {
		o.p.Pass = 1
	}
	for {
		left, err := o.reembedPass(ctx)
		if err != nil {
			return err
		}
		if o.p.PassMoved == 0 {
			o.summary = fmt.Sprintf("moved %d documents of %s back into %s.%s in %d passes", o.p.Moved, x.To, x.From, x.Array, o.p.Pass)
			if left > 0 {
				o.summary += fmt.Sprintf("; %d documents of %s stay there: their %s names no %s document", left, x.To, x.Ref, x.From)
			}
			return nil
		}
		if o.p.Pass >= o.opts.MaxPasses {
			return fmt.Errorf("embed %s back into %s.%s: the last of %d passes still moved %d documents: the new release is still writing to %s; what was moved is safe, and down again resumes (stop the new release's instances first)",
				x.To, x.From, x.Array, o.p.Pass, o.p.PassMoved, x.To)
		}
		o.p.Pass, o.p.LastID, o.p.PassMoved = o.p.Pass+1, nil, 0
		if err := o.save(ctx); err != nil {
			return err
		}
	}
}

// reembedPass walks the children in _id order; each child names its
// parent, whose children are all embedded at once. It returns how many
// children it found no parent for.
func (o *operation) reembedPass(ctx context.Context) (left int64, err error) {
	x := o.op.Extract
	seen := map[string]bool{} // the parents this pass embedded into
	for {
		o.hook("reshape.down.read", int(o.p.Moved))
		docs, err := o.nextBatch(ctx, o.db.Collection(x.To), nil, bson.D{{Key: "_id", Value: 1}, {Key: x.Ref, Value: 1}})
		if err != nil {
			return left, err
		}
		if len(docs) == 0 {
			return left, nil
		}
		for _, c := range docs {
			ref, err := c.LookupErr(x.Ref)
			if err != nil {
				left++ // not a child: no parent to go back to
				continue
			}
			k := string(rune(ref.Type)) + string(ref.Value)
			if seen[k] {
				continue
			}
			seen[k] = true
			changed, orphans, err := o.reembedParent(ctx, ref)
			if err != nil {
				return left, err
			}
			o.p.PassMoved += changed
			left += orphans
		}
		o.p.LastID = docs[len(docs)-1].Lookup("_id")
		o.hook("reshape.down.batch", int(o.p.Moved))
		if err := o.save(ctx); err != nil {
			return left, err
		}
		if err := o.throttle(ctx, len(docs)); err != nil {
			return left, err
		}
	}
}

// reembedParent embeds every child of parent pid (rule 8): the parent's
// array is set to what it holds plus the children it does not hold yet,
// guarded on the array as read, and only then are the children deleted.
// changed counts the elements embedded and the children deleted; orphans
// the children found when the parent does not exist.
func (o *operation) reembedParent(ctx context.Context, pid bson.RawValue) (changed, orphans int64, err error) {
	x := o.op.Extract
	for try := 0; try < maxContended; try++ {
		var parent bson.Raw
		err := o.db.Collection(x.From).FindOne(ctx, bson.D{{Key: "_id", Value: pid}},
			options.FindOne().SetProjection(parentProjection(x))).Decode(&parent)
		if errors.Is(err, mongo.ErrNoDocuments) {
			n, err := o.db.Collection(x.To).CountDocuments(ctx, bson.D{{Key: x.Ref, Value: pid}})
			return changed, n, err
		}
		if err != nil {
			return changed, 0, fmt.Errorf("read %s _id %s: %w", x.From, bsonx.ExtJSONOf(pid), err)
		}
		children, err := o.childrenOf(ctx, pid)
		if err != nil || len(children) == 0 {
			return changed, 0, err
		}
		held, guard, err := heldArray(x, parent, o.arrays)
		if err != nil {
			return changed, 0, err
		}
		all, pending, err := merge(pid, held, children, x, parent)
		if err != nil {
			return changed, 0, fmt.Errorf("%s _id %s: %w", x.From, bsonx.ExtJSONOf(pid), err)
		}
		if len(pending) > 0 {
			matched, err := o.setArray(ctx, pid, guard, all, len(pending), hashIDs(children))
			if err != nil {
				return changed, 0, err
			}
			if !matched {
				continue // the array changed since it was read: read it again
			}
			changed += int64(len(pending))
			o.p.Moved += int64(len(pending))
		}
		o.hook("reshape.down.parent", int(o.p.Moved))
		n, err := o.deleteChildren(ctx, children)
		return changed + n, 0, err
	}
	return changed + 1, 0, nil // contended: the next pass takes it
}

func (o *operation) childrenOf(ctx context.Context, pid bson.RawValue) ([]bson.Raw, error) {
	x := o.op.Extract
	cur, err := o.db.Collection(x.To).Find(ctx, bson.D{{Key: x.Ref, Value: pid}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the %s of %s _id %s: %w", x.To, x.From, bsonx.ExtJSONOf(pid), err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read the %s of %s _id %s: %w", x.To, x.From, bsonx.ExtJSONOf(pid), err)
	}
	return out, nil
}

// heldArray is the parent's array as read and the filter matching it
// exactly (missing, null and [] hold nothing, and are matched alike).
func heldArray(x *migration.Extract, parent bson.Raw, arrays version.Arrays) ([]bson.RawValue, bson.D, error) {
	val := parent.Lookup(splitPath(x.Array)...)
	empty := holdsNothing(arrays)
	if val.Type == 0 || val.Type == bson.TypeNull {
		return nil, empty, nil
	}
	arr, ok := val.ArrayOK()
	if !ok {
		return nil, nil, fmt.Errorf("%s _id %s: %s is not an array; fix the document, then run down again", x.From, bsonx.ExtJSONOf(parent.Lookup("_id")), x.Array)
	}
	vals, err := arr.Values()
	if err != nil || len(vals) == 0 {
		return nil, empty, err
	}
	seen := make(bson.A, len(vals))
	for i, v := range vals {
		seen[i] = v
	}
	return vals, append(version.SameArray(seen, arrays), bson.E{Key: "$size", Value: len(vals)}), nil
}

// merge is the parent's array once it holds every child: held, then each
// child it does not hold yet, in the children's _id order. A child is
// held when an element of held has the child's _id at the array's epoch
// (rule 4), or the parent's record of what a down embedded back names it
// (rule 8): so a child embedded by a down that then stopped before
// deleting it is not embedded twice.
func merge(pid bson.RawValue, held []bson.RawValue, children []bson.Raw, x *migration.Extract, parent bson.Raw) (all, pending []bson.RawValue, err error) {
	ref := x.Ref
	have := map[string]int{}
	for _, id := range idsAt(pid, held, Epoch(parent, x.Array), kept(x)) {
		have[idKey(id)]++
	}
	if rec, ok := parent.Lookup(splitPath(embeddedPath(x.Array))...).ArrayOK(); ok {
		ids, _ := rec.Values()
		for _, id := range ids {
			have[idKey(id)]++
		}
	}
	all = append(all, held...)
	for _, c := range children {
		elem, hashID, err := element(c, ref)
		if err != nil {
			return nil, nil, err
		}
		k := idKey(ChildID(pid, elem, all))
		if hashID != nil && bytes.Equal(hashID.Lookup("parent").Value, pid.Value) {
			k = idKey(hashID) // numbered among its equals as extract numbered it
		}
		if have[k] > 0 {
			have[k]--
			continue
		}
		all = append(all, elem)
		pending = append(pending, elem)
	}
	return all, pending, nil
}

func idKey(id any) string {
	b, _ := bson.Marshal(bson.D{{Key: "i", Value: id}})
	return string(b)
}

// element is the array element child c was made from (the inverse of
// [child]): its fields but ref, with its _id back (the key of a
// {parent, key} _id; none for a {parent, hash, n} one; the child's own
// _id otherwise, a child the new release wrote), or the value of an
// element that was not a document. hashID is the child's _id when it is
// a {parent, hash, n} one.
func element(c bson.Raw, ref string) (elem bson.RawValue, hashID bson.Raw, err error) {
	id := c.Lookup("_id")
	var elemID *bson.RawValue
	if d, ok := id.DocumentOK(); ok && d.Lookup("parent").Type != 0 {
		if k, err := d.LookupErr("key"); err == nil {
			elemID = &k
		} else if _, err := d.LookupErr("hash"); err == nil {
			hashID = d
		} else {
			elemID = &id
		}
	} else {
		elemID = &id
	}
	elems, err := c.Elements()
	if err != nil {
		return elem, nil, err
	}
	if hashID != nil && len(elems) == 3 {
		if v, err := c.LookupErr("value"); err == nil && elementHash(v) == hashID.Lookup("hash").StringValue() {
			return v, hashID, nil
		}
	}
	d := bson.D{}
	if elemID != nil {
		d = append(d, bson.E{Key: "_id", Value: *elemID})
	}
	for _, e := range elems {
		if k := e.Key(); k != "_id" && k != ref {
			d = append(d, bson.E{Key: k, Value: e.Value()})
		}
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		return elem, nil, err
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw}, hashID, nil
}

// hashIDs are the {parent, hash, n} _ids among children.
func hashIDs(children []bson.Raw) bson.A {
	var ids bson.A
	for _, c := range children {
		if d, ok := c.Lookup("_id").DocumentOK(); ok && d.Lookup("parent").Type != 0 && d.Lookup("hash").Type != 0 {
			ids = append(ids, c.Lookup("_id"))
		}
	}
	return ids
}

// setArray sets the parent's array to all, filtered on guard (the array
// as read), and takes the elements embedded off the count (keep: count):
// the exact inverse of extract's update. With children that have a
// {parent, hash, n} _id (hashed), it also records their _ids on the parent
// and advances the array's epoch (rule 8): the elements it embeds can no
// longer be told from the others by their hash and rank, so a down
// stopped before deleting the children finds them held by the record.
func (o *operation) setArray(ctx context.Context, pid bson.RawValue, guard bson.D, all []bson.RawValue, added int, hashed bson.A) (bool, error) {
	x := o.op.Extract
	arr := make(bson.A, len(all))
	for i, v := range all {
		arr[i] = v
	}
	update := bson.D{{Key: "$set", Value: bson.D{{Key: x.Array, Value: arr}}}}
	if x.Keep == migration.KeepCount {
		update = append(update, bson.E{Key: "$inc", Value: bson.D{{Key: x.CountField, Value: -int64(added)}}})
	}
	if len(hashed) > 0 {
		update = addTo(update, "$set", embeddedPath(x.Array), hashed)
		update = addTo(update, "$set", epochPath(x.Array), bson.NewObjectID())
	}
	if err := lease.Fence(ctx); err != nil {
		return false, err
	}
	res, err := o.db.Collection(x.From).UpdateOne(ctx, bson.D{{Key: "_id", Value: pid}, {Key: x.Array, Value: guard}}, update)
	if err != nil {
		return false, fmt.Errorf("update %s _id %s: %w", x.From, bsonx.ExtJSONOf(pid), err)
	}
	return res.MatchedCount == 1, nil
}

// deleteChildren deletes the children the parent now holds (rule 9).
func (o *operation) deleteChildren(ctx context.Context, children []bson.Raw) (int64, error) {
	ids := make(bson.A, len(children))
	for i, c := range children {
		ids[i] = c.Lookup("_id")
	}
	if err := lease.Fence(ctx); err != nil {
		return 0, err
	}
	res, err := o.db.Collection(o.op.Extract.To).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return 0, fmt.Errorf("delete the %s embedded back: %w", o.op.Extract.To, err)
	}
	o.hook("reshape.down.delete", int(o.p.Moved))
	return res.DeletedCount, nil
}
