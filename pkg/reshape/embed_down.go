package reshape

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

func describeEmbed(e *migration.Embed) string {
	return fmt.Sprintf("embed %s into %s from %s by %s (%s)", strings.Join(e.Paths(), ", "), e.Into, e.From, e.Copy.Via, e.Copy.Mode)
}

// planEmbed counts the referencing documents, and refuses when some hold
// a copied field already (HeldError).
func planEmbed(ctx context.Context, db *mongo.Database, e *migration.Embed, p *Planned) error {
	n, err := db.Collection(e.Into).CountDocuments(ctx, bson.D{{Key: e.Copy.Via, Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil {
		return err
	}
	p.Documents = n
	p.Summary = fmt.Sprintf("embeds %s into %d %s documents from %s by %s (%s)", strings.Join(e.Paths(), ", "), n, e.Into, e.From, e.Copy.Via, e.Copy.Mode)
	held, first, err := heldBy(ctx, db, e)
	if err != nil {
		return err
	}
	if held > 0 {
		p.Refused = (&HeldError{Collection: e.Into, Fields: e.Paths(), Documents: held, FirstID: first}).Error()
	}
	return nil
}

// EmbedDownNote is the plan note of reverting embed e (at names the
// operation: "file:line: run operation 1").
func EmbedDownNote(at string, e *migration.Embed) string {
	s := fmt.Sprintf("%s: %s are removed from %s", at, strings.Join(e.Paths(), ", "), e.Into)
	if e.Copy.Mode == migration.CopySnapshot {
		return s + " (a snapshot: the values as copied cannot come back; a later up copies what " + e.From + " holds then)"
	}
	return s + " (a mirror: a later up copies them again from " + e.From + ")"
}

// unembed removes the copied fields from every document holding one, in
// _id order (rule 13); a base inside an array is guarded on the whole
// array as read, as the embed is.
func (o *operation) unembed(ctx context.Context, r *OpResult) error {
	e := o.op.Embed
	coll := o.db.Collection(e.Into)
	if o.p.Pass == 0 {
		o.p.Pass = 1
	}
	for {
		o.hook("reshape.down.read", int(o.p.Moved))
		docs, err := o.nextBatch(ctx, coll, holdingCopy(e), embedProjection(e))
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			break
		}
		for _, d := range docs {
			if err := o.unembedDoc(ctx, d); err != nil {
				return err
			}
			o.p.Moved++
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
	what := fmt.Sprintf("removed %s from %d %s documents", strings.Join(e.Paths(), ", "), o.p.Moved, e.Into)
	if e.Copy.Mode == migration.CopySnapshot {
		o.summary = what + " (the snapshot of " + e.From + ")"
		r.Unrestorable = fmt.Sprintf("%s:%d: %04d embed (run operation %d) %s: the snapshot values as copied cannot come back; a later up copies what %s holds then",
			migration.DisplayName(o.m.File), o.op.Pos.Line, o.m.Version, o.p.Index+1, what, e.From)
	} else {
		o.summary = what + " (the mirror of " + e.From + ")"
	}
	return nil
}

// unembedDoc removes doc's copied fields: one $unset by _id when the copies
// are outside arrays, else guarded on the array as read and retried.
func (o *operation) unembedDoc(ctx context.Context, doc bson.Raw) error {
	e := o.op.Embed
	coll := o.db.Collection(e.Into)
	id := doc.Lookup("_id")
	for try := 0; try < maxContended; try++ {
		filter, unset := unembedUpdate(e, doc, o.arrays)
		if len(unset) == 0 {
			return nil
		}
		o.hook("reshape.down.unset", int(o.p.Moved))
		if err := lease.Fence(ctx); err != nil {
			return err
		}
		res, err := coll.UpdateOne(ctx, filter, bson.D{{Key: "$unset", Value: unset}})
		if err != nil {
			return fmt.Errorf("update %s _id %s: %w", e.Into, bsonx.ExtJSONOf(id), err)
		}
		if res.MatchedCount == 1 {
			return nil
		}
		err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(embedProjection(e))).Decode(&doc)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s _id %s again: %w", e.Into, bsonx.ExtJSONOf(id), err)
		}
	}
	return fmt.Errorf("%s _id %s kept changing while its copies were removed (%d reads): run down again, it resumes", e.Into, bsonx.ExtJSONOf(id), maxContended)
}

func unembedUpdate(e *migration.Embed, doc bson.Raw, arrays version.Arrays) (filter, unset bson.D) {
	filter = bson.D{{Key: "_id", Value: doc.Lookup("_id")}}
	b := e.Copy.Base()
	arr, isArr := doc.Lookup(splitPath(b)...).ArrayOK()
	if b == "" || !isArr {
		for _, p := range e.Paths() {
			unset = append(unset, bson.E{Key: p, Value: ""})
		}
		return filter, unset
	}
	vals, _ := arr.Values()
	for i, el := range vals {
		d, ok := el.DocumentOK()
		if !ok {
			continue
		}
		for _, f := range e.Copy.Fields {
			if d.Lookup(splitPath(f.Path)...).Type != 0 {
				unset = append(unset, bson.E{Key: b + "." + strconv.Itoa(i) + "." + f.Path, Value: ""})
			}
		}
	}
	return append(filter, guardValue(b, doc.Lookup(splitPath(b)...), arrays)), unset
}
