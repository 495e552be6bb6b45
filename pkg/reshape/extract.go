package reshape

import (
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

// BusyError is an extract still finding elements to move after its last
// pass: old releases keep appending to the array.
type BusyError struct {
	Collection, Array string
	Passes            int
	Moved             int64
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("extract %s.%s: the last of %d passes still moved %d elements: old releases are still appending to the array; the moved elements are safe, and running the migration again resumes (stop the old release's instances first, or raise the passes)", e.Collection, e.Array, e.Passes, e.Moved)
}

// maxContended bounds how often one parent is read again within a pass
// after its guarded update matched nothing; past it, the parent is left to
// the next pass.
const maxContended = 5

// extract walks the parents in _id order, pass after pass, until a pass
// moves nothing (rule 7).
func (o *operation) extract(ctx context.Context) error {
	x := o.op.Extract
	if o.p.Pass == 0 {
		o.p.Pass = 1
	}
	for {
		if err := o.extractPass(ctx); err != nil {
			return err
		}
		if o.p.PassMoved == 0 {
			o.summary = fmt.Sprintf("moved %d elements of %s.%s into %s in %d passes", o.p.Moved, x.From, x.Array, x.To, o.p.Pass)
			return o.noteReplaced(ctx)
		}
		if o.p.Pass >= o.opts.MaxPasses {
			return &BusyError{Collection: x.From, Array: x.Array, Passes: o.p.Pass, Moved: o.p.PassMoved}
		}
		o.p.Pass, o.p.LastID, o.p.PassMoved = o.p.Pass+1, nil, 0
		if err := o.save(ctx); err != nil {
			return err
		}
	}
}

// withElements matches the parents extract visits: those whose array has
// an element (keep: first), or that have the field at all (an empty
// array, or null as a Go nil slice is stored, is removed too, and counted
// as 0).
func withElements(x *migration.Extract) bson.D {
	if x.Keep == migration.KeepFirst {
		return bson.D{{Key: x.Array + ".0", Value: bson.D{{Key: "$exists", Value: true}}}}
	}
	return bson.D{{Key: x.Array, Value: bson.D{{Key: "$exists", Value: true}}}}
}

func (o *operation) extractPass(ctx context.Context) error {
	x := o.op.Extract
	parents := o.db.Collection(x.From)
	// A parent can have been moved before this pass only if children exist.
	replaced, err := o.anyChild(ctx)
	if err != nil {
		return err
	}
	for {
		o.hook("reshape.read", int(o.p.Moved))
		docs, err := o.nextBatch(ctx, parents, withElements(x), parentProjection(x))
		if err != nil || len(docs) == 0 {
			return err
		}
		last := docs[len(docs)-1].Lookup("_id")
		if docs, err = o.stampBatch(ctx, docs, replaced); err != nil {
			return err
		}
		for _, d := range docs {
			changed, err := o.moveParent(ctx, d)
			if err != nil {
				return err
			}
			o.p.PassMoved += changed
		}
		o.p.LastID = last
		o.hook("reshape.batch", int(o.p.Moved))
		if err := o.save(ctx); err != nil {
			return err
		}
		if err := o.throttle(ctx, len(docs)); err != nil {
			return err
		}
	}
}

// anyChild reports whether the child collection holds a document.
func (o *operation) anyChild(ctx context.Context) (bool, error) {
	err := o.db.Collection(o.op.Extract.To).FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", o.op.Extract.To, err)
	}
	return true, nil
}

// moveParent moves one parent's elements (rule 5): the children first,
// then the parent's update guarded on the array as read; when the guard
// matches nothing the parent is read again. It returns the children
// inserted plus the parent updates that matched (what makes a pass count).
func (o *operation) moveParent(ctx context.Context, doc bson.Raw) (int64, error) {
	x := o.op.Extract
	id := doc.Lookup("_id")
	var changed int64
	for try := 0; try < maxContended; try++ {
		if doc == nil {
			return changed, nil // the parent went away since the read
		}
		if needsEpoch(x, doc) { // replaced whole since the batch's stamp (rule 4)
			var err error
			if doc, err = o.stampOne(ctx, id); err != nil {
				return changed, err
			}
			continue
		}
		val := doc.Lookup(splitPath(x.Array)...)
		arr, ok := val.ArrayOK()
		switch {
		case !ok && val.Type == 0:
			return changed, nil // the array went away since the read
		case !ok && val.Type == bson.TypeNull:
			arr, _ = bson.Raw(emptyArray).Lookup("a").ArrayOK()
		case !ok:
			return changed, fmt.Errorf("%s _id %s: %s is not an array; fix the document, or leave it out of the extract", x.From, bsonx.ExtJSONOf(id), x.Array)
		}
		epoch := Epoch(doc, x.Array)
		o.hook("reshape.derive", int(o.p.Moved))
		inserted, err := o.writeChildren(ctx, id, arr, epoch)
		if err != nil {
			return changed, err
		}
		changed += inserted
		o.p.Moved += inserted
		o.hook("reshape.children", int(o.p.Moved))
		matched, noop, err := o.updateParent(ctx, doc, arr)
		if err != nil {
			return changed, err
		}
		if noop {
			return changed, nil
		}
		if matched {
			o.hook("reshape.parent", int(o.p.Moved))
			return changed + 1, nil
		}
		// The array changed since it was read: read the parent again.
		if doc, err = o.readParent(ctx, id); err != nil {
			return changed, err
		}
	}
	// Contended: the next pass (which this one makes happen) takes it.
	return changed + 1, nil
}

// parentProjection is what extract reads of a parent: its _id, the array
// and the array's epoch (rule 4).
func parentProjection(x *migration.Extract) bson.D {
	return bson.D{{Key: "_id", Value: 1}, {Key: x.Array, Value: 1}, {Key: EpochField + "." + x.Array, Value: 1}}
}

// kept is how many leading elements extract leaves in the array.
func kept(x *migration.Extract) int {
	if x.Keep == migration.KeepFirst {
		return x.First
	}
	return 0
}

func (o *operation) writeChildren(ctx context.Context, pid bson.RawValue, arr bson.RawArray, epoch bson.RawValue) (int64, error) {
	x := o.op.Extract
	vals, err := arr.Values()
	if err != nil {
		return 0, err
	}
	docs := make([]any, 0, len(vals))
	ids := idsAt(pid, vals, epoch, kept(x))
	for i, v := range vals {
		c, err := child(ids[i], x.Ref, pid, v)
		if err != nil {
			return 0, fmt.Errorf("%s _id %s, %s element %d: %w", x.From, bsonx.ExtJSONOf(pid), x.Array, i, err)
		}
		docs = append(docs, c)
	}
	n, err := insertNew(ctx, o.db.Collection(x.To), docs)
	if err != nil {
		return 0, fmt.Errorf("write the children of %s _id %s into %s: %w", x.From, bsonx.ExtJSONOf(pid), x.To, err)
	}
	return n, nil
}

// updateParent changes the parent's array as the file says, filtered on
// the array as read (rules 5, 6). noop: the parent keeps its array as it
// is (keep: first, and no more elements than it keeps). When it removes
// an element without an _id it advances the array's epoch (rule 4).
func (o *operation) updateParent(ctx context.Context, doc bson.Raw, arr bson.RawArray) (matched, noop bool, err error) {
	x := o.op.Extract
	pid := doc.Lookup("_id")
	vals, err := arr.Values()
	if err != nil {
		return false, false, err
	}
	var update bson.D
	switch x.Keep {
	case migration.KeepFirst:
		if len(vals) <= x.First {
			return false, true, nil
		}
		keep := bson.A{}
		for _, v := range vals[:x.First] {
			keep = append(keep, v)
		}
		update = bson.D{{Key: "$set", Value: bson.D{{Key: x.Array, Value: keep}}}}
	case migration.KeepCount:
		update = bson.D{{Key: "$unset", Value: bson.D{{Key: x.Array, Value: ""}}},
			{Key: "$inc", Value: bson.D{{Key: x.CountField, Value: int64(len(vals))}}}}
	default:
		update = bson.D{{Key: "$unset", Value: bson.D{{Key: x.Array, Value: ""}}}}
	}
	update = advanceEpoch(x, doc, vals, update)
	// The array as read, element by element (a bson.RawArray value would
	// not be sent as an array).
	seen := make(bson.A, len(vals))
	for i, v := range vals {
		seen[i] = v
	}
	guard := append(version.SameArray(seen, o.arrays), bson.E{Key: "$size", Value: len(vals)})
	if len(vals) == 0 { // [] or null
		guard = holdsNothing(o.arrays)
	}
	filter := bson.D{{Key: "_id", Value: pid}, {Key: x.Array, Value: guard}}
	if err := lease.Fence(ctx); err != nil {
		return false, false, err
	}
	res, err := o.db.Collection(x.From).UpdateOne(ctx, filter, update)
	if err != nil {
		return false, false, fmt.Errorf("update %s _id %s: %w", x.From, bsonx.ExtJSONOf(pid), err)
	}
	return res.MatchedCount == 1, false, nil
}

// emptyArray is {a: []}.
var emptyArray = func() []byte {
	b, _ := bson.Marshal(bson.D{{Key: "a", Value: bson.A{}}})
	return b
}()

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// addTo adds field: value to update's operator op.
func addTo(update bson.D, op, field string, value any) bson.D {
	for i, e := range update {
		if e.Key == op {
			update[i].Value = append(e.Value.(bson.D), bson.E{Key: field, Value: value})
			return update
		}
	}
	return append(update, bson.E{Key: op, Value: bson.D{{Key: field, Value: value}}})
}

// readParent reads parent id again as extract reads it (nil: it is gone).
func (o *operation) readParent(ctx context.Context, id bson.RawValue) (bson.Raw, error) {
	x := o.op.Extract
	var doc bson.Raw
	err := o.db.Collection(x.From).FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(parentProjection(x))).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s _id %s again: %w", x.From, bsonx.ExtJSONOf(id), err)
	}
	return doc, nil
}
