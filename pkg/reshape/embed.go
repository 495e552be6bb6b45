package reshape

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// HeldError refuses an embed whose copied fields some documents already
// hold when it starts: the copy would overwrite them, and down, which
// removes the copied fields, would remove them.
type HeldError struct {
	Collection string
	Fields     []string
	Documents  int64
	FirstID    bsonx.ExtJSON
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("embed into %s: %d %s documents already hold %s (first _id %s): the copy would overwrite them and down, which removes the copied fields, would remove them; copy into fields of other names, or unset them first (an upgrade step with discard: true)",
		e.Collection, e.Documents, e.Collection, strings.Join(e.Fields, " or "), e.FirstID)
}

// maxDanglingIDs bounds the _ids of dangling references a result names.
const maxDanglingIDs = 10

// embed fills the copies of the referencing documents in _id order, pass
// after pass, until a pass walked in full by this run writes nothing (rule
// 11 of the package doc).
func (o *operation) embed(ctx context.Context) error {
	e := o.op.Embed
	if o.p.Pass == 0 {
		if err := o.refuseHeld(ctx); err != nil {
			return err
		}
		o.p.Pass = 1
		if err := o.save(ctx); err != nil {
			return err
		}
	}
	for {
		full := o.p.LastID == nil
		o.dangling, o.danglingIDs = 0, nil
		if err := o.embedPass(ctx); err != nil {
			return err
		}
		if o.p.PassMoved == 0 && full {
			o.summary = embedSummary(e, o.p.Moved, o.p.Pass, o.dangling, o.danglingIDs)
			return nil
		}
		if o.p.Pass >= o.opts.MaxPasses && o.p.PassMoved > 0 {
			return fmt.Errorf("embed into %s: the last of %d passes still wrote %d documents: old releases keep removing or changing the copies; what was written is safe, and running the migration again resumes (stop the old release's instances first)",
				e.Into, o.p.Pass, o.p.PassMoved)
		}
		o.p.Pass, o.p.LastID, o.p.PassMoved = o.p.Pass+1, nil, 0
		if err := o.save(ctx); err != nil {
			return err
		}
	}
}

func embedSummary(e *migration.Embed, n int64, passes int, dangling int64, ids []string) string {
	s := fmt.Sprintf("embedded %s into %d %s documents from %s (%s) in %d passes", strings.Join(e.Paths(), ", "), n, e.Into, e.From, e.Copy.Mode, passes)
	if dangling > 0 {
		more := ""
		if dangling > int64(len(ids)) {
			more = fmt.Sprintf(" and %d more", dangling-int64(len(ids)))
		}
		s += fmt.Sprintf("; %d %s documents hold a %s naming no %s document (_id %s%s): left without the copy", dangling, e.Into, e.Copy.Via, e.From, strings.Join(ids, ", "), more)
	}
	return s
}

// refuseHeld refuses to start when documents hold a copied field already.
func (o *operation) refuseHeld(ctx context.Context) error {
	e := o.op.Embed
	held, first, err := heldBy(ctx, o.db, e)
	if err != nil || held == 0 {
		return err
	}
	return &HeldError{Collection: e.Into, Fields: e.Paths(), Documents: held, FirstID: first}
}

func heldBy(ctx context.Context, db *mongo.Database, e *migration.Embed) (int64, bsonx.ExtJSON, error) {
	coll := db.Collection(e.Into)
	filter := holdingCopy(e)
	n, err := coll.CountDocuments(ctx, filter)
	if err != nil || n == 0 {
		return n, "", err
	}
	var d bson.Raw
	err = coll.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
	if err != nil {
		return n, "", err
	}
	return n, bsonx.ExtJSONOf(d.Lookup("_id")), nil
}

// holdingCopy matches the documents holding a copied field.
func holdingCopy(e *migration.Embed) bson.D {
	var or bson.A
	for _, p := range e.Paths() {
		or = append(or, bson.D{{Key: p, Value: bson.D{{Key: "$exists", Value: true}}}})
	}
	return bson.D{{Key: "$or", Value: or}}
}

func (o *operation) embedPass(ctx context.Context) error {
	e := o.op.Embed
	coll := o.db.Collection(e.Into)
	for {
		filter := bson.D{{Key: e.Copy.Via, Value: bson.D{{Key: "$exists", Value: true}}}}
		o.hook("reshape.read", int(o.p.Moved))
		docs, err := o.nextBatch(ctx, coll, filter, embedProjection(e))
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			return nil
		}
		src, err := o.sources(ctx, docs)
		if err != nil {
			return err
		}
		for _, d := range docs {
			wrote, err := o.embedDoc(ctx, d, src)
			if err != nil {
				return err
			}
			if wrote {
				o.p.Moved++
				o.p.PassMoved++
			}
		}
		o.p.LastID = docs[len(docs)-1].Lookup("_id")
		o.hook("reshape.batch", int(o.p.Moved))
		if err := o.save(ctx); err != nil {
			return err
		}
		if err := o.throttle(ctx, len(docs)); err != nil {
			return err
		}
	}
}

// embedProjection is what embed reads of a referencing document: the
// reference and the copies beside it (for a base inside the document, the
// base's top field as a whole: the guard of an array is the whole array).
func embedProjection(e *migration.Embed) bson.D {
	if b := e.Copy.Base(); b != "" {
		top, _, _ := strings.Cut(b, ".")
		return bson.D{{Key: "_id", Value: 1}, {Key: top, Value: 1}}
	}
	d := bson.D{{Key: "_id", Value: 1}, {Key: e.Copy.Via, Value: 1}}
	for _, p := range e.Paths() {
		d = append(d, bson.E{Key: p, Value: 1})
	}
	return d
}

// sources fetches the source documents the batch's references name, with
// one $in query; a reference missing from the map names no document.
func (o *operation) sources(ctx context.Context, docs []bson.Raw) (map[string]bson.Raw, error) {
	e := o.op.Embed
	var ids bson.A
	seen := map[string]bool{}
	for _, d := range docs {
		bs, err := basesOf(d, e)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if k := refKey(b.ref); !seen[k] {
				seen[k] = true
				ids = append(ids, b.ref)
			}
		}
	}
	out := map[string]bson.Raw{}
	if len(ids) == 0 {
		return out, nil
	}
	return out, o.fetchSources(ctx, ids, out)
}

// fetchSources reads the source documents with the _ids ids into into,
// by refKey; an _id naming no document is recorded as nil.
func (o *operation) fetchSources(ctx context.Context, ids bson.A, into map[string]bson.Raw) error {
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	e := o.op.Embed
	proj := bson.D{{Key: "_id", Value: 1}}
	for _, f := range e.Copy.Fields {
		proj = append(proj, bson.E{Key: f.From, Value: 1})
	}
	cur, err := o.db.Collection(e.From).Find(ctx, filter, options.Find().SetProjection(proj))
	if err != nil {
		return fmt.Errorf("read %s: %w", e.From, err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read %s: %w", e.From, err)
	}
	for _, id := range ids {
		if k := refKey(id.(bson.RawValue)); into[k] == nil {
			into[k] = nil
		}
	}
	for _, d := range docs {
		into[refKey(d.Lookup("_id"))] = d
	}
	return nil
}

// embedDoc writes one document's copies, guarded (rule 12); when the
// guard matches nothing the document is read again.
func (o *operation) embedDoc(ctx context.Context, doc bson.Raw, src map[string]bson.Raw) (bool, error) {
	e := o.op.Embed
	id := doc.Lookup("_id")
	coll := o.db.Collection(e.Into)
	for try := 0; try < maxContended; try++ {
		if err := o.fetchMissing(ctx, doc, src); err != nil {
			return false, err
		}
		filter, set, dangling, err := embedUpdate(e, doc, src, o.arrays)
		if err != nil {
			return false, err
		}
		if len(set) == 0 {
			o.noteDangling(id, dangling)
			return false, nil
		}
		o.hook("reshape.embed", int(o.p.Moved))
		if err := lease.Fence(ctx); err != nil {
			return false, err
		}
		res, err := coll.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}})
		if err != nil {
			return false, fmt.Errorf("update %s _id %s: %w", e.Into, bsonx.ExtJSONOf(id), err)
		}
		if res.MatchedCount == 1 {
			o.noteDangling(id, dangling)
			return true, nil
		}
		err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(embedProjection(e))).Decode(&doc)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s _id %s again: %w", e.Into, bsonx.ExtJSONOf(id), err)
		}
	}
	// Contended: the next pass (which this write makes happen) takes it.
	return true, nil
}

func (o *operation) noteDangling(id bson.RawValue, n int) {
	if n == 0 {
		return
	}
	o.dangling++
	if len(o.danglingIDs) < maxDanglingIDs {
		o.danglingIDs = append(o.danglingIDs, string(bsonx.ExtJSONOf(id)))
	}
}

// fetchMissing reads the sources of references read again that the
// batch's query did not fetch (a reference changed meanwhile).
func (o *operation) fetchMissing(ctx context.Context, doc bson.Raw, src map[string]bson.Raw) error {
	bs, err := basesOf(doc, o.op.Embed)
	if err != nil {
		return err
	}
	var ids bson.A
	for _, b := range bs {
		if _, ok := src[refKey(b.ref)]; !ok {
			ids = append(ids, b.ref)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return o.fetchSources(ctx, ids, src)
}
