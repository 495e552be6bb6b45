package integrity

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Applied is what [Checker.ApplyChange] did for one change event.
type Applied struct {
	Operation  string        `json:"operationType"`
	Collection string        `json:"collection,omitempty"`
	ID         bsonx.ExtJSON `json:"_id,omitempty"`
	// Fixes are the guarded writes made (or found in line), as repair
	// reports them.
	Fixes []Fix `json:"fixes"`
	// Propagated are the mirror copies of a changed source written.
	Propagated []Propagated `json:"propagated,omitempty"`
	// Rescanned are the rules checked and repaired whole because the event
	// does not say which documents it touched (a child deleted without its
	// pre-image, a collection dropped).
	Rescanned []string `json:"rescanned,omitempty"`
}

// change is the part of a change event the rules read. The fields are
// MongoDB's change event's (src/mongo/db/pipeline/document_source_change_stream.h:
// _id, operationType, ns {db, coll}, documentKey, fullDocument,
// fullDocumentBeforeChange, updateDescription {updatedFields,
// removedFields, truncatedArrays}; a rename's to {db, coll}).
type change struct {
	op     string
	coll   string
	to     string // rename's target
	id     bson.RawValue
	full   bson.Raw // nil: absent or null
	before bson.Raw
	fields []string // the fields an update named; nil without updateDescription
	desc   bool
}

func parseChange(ev bson.Raw) (change, error) {
	ch := change{}
	op, ok := ev.Lookup("operationType").StringValueOK()
	if !ok {
		return ch, fmt.Errorf("change event without operationType: %s", ev)
	}
	ch.op = op
	ch.coll, _ = ev.Lookup("ns", "coll").StringValueOK()
	ch.to, _ = ev.Lookup("to", "coll").StringValueOK()
	ch.id = ev.Lookup("documentKey", "_id")
	ch.full, _ = ev.Lookup("fullDocument").DocumentOK()
	ch.before, _ = ev.Lookup("fullDocumentBeforeChange").DocumentOK()
	if d, ok := ev.Lookup("updateDescription").DocumentOK(); ok {
		ch.desc = true
		if up, ok := d.Lookup("updatedFields").DocumentOK(); ok {
			elems, _ := up.Elements()
			for _, e := range elems {
				ch.fields = append(ch.fields, e.Key())
			}
		}
		// removedFields are names; truncatedArrays (MongoDB 5.0+)
		// {field, newSize} documents.
		for _, arr := range []string{"removedFields", "truncatedArrays"} {
			a, _ := d.Lookup(arr).ArrayOK()
			vals, _ := a.Values()
			for _, v := range vals {
				if s, ok := v.StringValueOK(); ok {
					ch.fields = append(ch.fields, s)
				} else if doc, ok := v.DocumentOK(); ok {
					if f, ok := doc.Lookup("field").StringValueOK(); ok {
						ch.fields = append(ch.fields, f)
					}
				}
			}
		}
	}
	if slices.Contains(documentOps, op) && ch.id.Type == 0 {
		return ch, fmt.Errorf("%s event without documentKey._id: %s", op, ev)
	}
	return ch, nil
}

// documentOps are the events of one document, which name it (documentKey).
var documentOps = []string{"insert", "update", "replace", "delete"}

// touches reports whether an update's fields may have changed path: a
// field at, above or below it. An event without an update description
// (insert, replace) touches everything.
func (ch change) touches(path string) bool {
	if !ch.desc {
		return true
	}
	for _, f := range ch.fields {
		if f == path || strings.HasPrefix(path, f+".") || strings.HasPrefix(f, path+".") {
			return true
		}
		// A numeric segment ("classes.1.credits") names an element of
		// the array at the path's prefix.
		if strings.Contains(f, ".") && sameSkippingIndexes(f, path) {
			return true
		}
	}
	return false
}

// sameSkippingIndexes compares two dotted paths leaving out the numeric
// segments (array indexes) of f.
func sameSkippingIndexes(f, path string) bool {
	var segs []string
	for _, s := range strings.Split(f, ".") {
		if strings.Trim(s, "0123456789") != "" {
			segs = append(segs, s)
		}
	}
	g := strings.Join(segs, ".")
	return g == path || strings.HasPrefix(path, g+".") || strings.HasPrefix(g, path+".")
}

// collectionWide are the events that change a whole collection (or the
// database) at once.
var collectionWide = []string{"drop", "rename", "dropDatabase"}

// ApplyChange applies the fixes one change event calls for, through the
// guarded writes repair makes: a changed source of mirror copies is
// propagated to them ([Checker.Propagate]); a child of an aggregate
// inserted, changed or deleted has its parents' aggregates recomputed and
// written guarded on the stale value (a concurrent $inc is re-checked,
// never erased); a deleted referenced document has the references to it
// handled as its rule says (after looking it up again). Where the event
// does not say which documents it touched (a child deleted or replaced
// without its pre-image, fullDocumentBeforeChange; a drop, rename or
// dropDatabase) the rule is checked and repaired whole. Snapshots are
// never written. ev is the event as a change stream delivers it: an
// application that runs its own stream (a trigger) can call ApplyChange
// with each of its events.
func (c *Checker) ApplyChange(ctx context.Context, ev bson.Raw) (*Applied, error) {
	ch, err := parseChange(ev)
	if err != nil {
		return nil, err
	}
	a := &Applied{Operation: ch.op, Collection: ch.coll, Fixes: []Fix{}}
	if ch.id.Type != 0 {
		a.ID = bsonx.ExtJSONOf(ch.id)
	}
	if slices.Contains(collectionWide, ch.op) {
		return a, c.applyWide(ctx, ch, a)
	}
	for _, r := range c.rules {
		switch r := r.(type) {
		case *copyRule:
			if r.to == ch.coll && r.cp.Mode == migration.CopyMirror {
				err = c.followSource(ctx, r, ch, a)
			}
		case *aggRule:
			if r.agg.From == ch.coll {
				err = c.followChild(ctx, r, ch, a)
			}
		case *refRule:
			if r.ref.To == ch.coll && ch.op == "delete" {
				err = c.fixWhere(ctx, r, bson.D{{Key: r.ref.Path, Value: ch.id}}, a)
			}
		}
		if err != nil {
			return a, fmt.Errorf("apply the %s of %s _id %s: %s: %w", ch.op, ch.coll, a.ID, r.info().Rule, err)
		}
	}
	return a, nil
}

// applyWide rescans every rule that reads a collection the event changed
// whole (all of them for a dropped database).
func (c *Checker) applyWide(ctx context.Context, ch change, a *Applied) error {
	for _, r := range c.rules {
		reads := c.reads(r)
		if ch.op != "dropDatabase" && !slices.Contains(reads, ch.coll) && (ch.to == "" || !slices.Contains(reads, ch.to)) {
			continue
		}
		if err := c.rescan(ctx, r, a); err != nil {
			return fmt.Errorf("apply the %s of %s: %w", ch.op, ch.coll, err)
		}
	}
	return nil
}

// reads are the collections r's values come from (those a follower
// watches for it): a mirror's source, an aggregate's children, a
// reference's target.
func (c *Checker) reads(r rule) []string {
	switch r := r.(type) {
	case *copyRule:
		if r.cp.Mode == migration.CopyMirror {
			return []string{r.to}
		}
	case *aggRule:
		return []string{r.agg.From}
	case *refRule:
		return []string{r.ref.To}
	}
	return nil
}

// followSource propagates a changed source to r's copies: an insert or a
// replace, or an update naming the copied field.
func (c *Checker) followSource(ctx context.Context, r *copyRule, ch change, a *Applied) error {
	switch {
	case ch.op != "insert" && ch.op != "update" && ch.op != "replace":
		return nil // a deleted source: the reference rule's business
	case !ch.touches(r.field.From):
		return nil
	case ch.op == "update" && ch.full == nil:
		return nil // deleted since (updateLookup found nothing): its delete follows
	}
	if n, err := c.db.Collection(r.to).CountDocuments(ctx, bson.D{{Key: "_id", Value: ch.id}}); err != nil || n == 0 {
		return err // deleted since
	}
	p, err := c.propagate(ctx, r, ch.id)
	if err != nil {
		return err
	}
	a.Propagated = append(a.Propagated, p)
	return nil
}

// followChild recomputes the aggregates of the parents a child names now
// (fullDocument) and named before (fullDocumentBeforeChange); without the
// pre-image of a delete, a replace or an update of the reference, the
// parent it left is unknown and r is rescanned whole.
func (c *Checker) followChild(ctx context.Context, r *aggRule, ch change, a *Applied) error {
	switch ch.op {
	case "insert", "update", "replace", "delete":
	default:
		return nil
	}
	byChanged := ch.touches(r.agg.By)
	if !byChanged && (r.agg.Of == "" || !ch.touches(r.agg.Of)) {
		return nil // nothing the aggregate counts changed
	}
	if ch.before == nil && ch.op != "insert" && byChanged {
		return c.rescan(ctx, r, a)
	}
	var parents []bson.RawValue
	for _, d := range []bson.Raw{ch.full, ch.before} {
		if d != nil {
			parents = append(parents, refValues(d, r.agg.By)...)
		}
	}
	for _, p := range distinct(parents) {
		if err := c.fixWhere(ctx, r, bson.D{{Key: "_id", Value: p}}, a); err != nil {
			return err
		}
	}
	return nil
}

func (c *Checker) rescan(ctx context.Context, r rule, a *Applied) error {
	a.Rescanned = append(a.Rescanned, r.info().Rule)
	return c.fixWhere(ctx, r, bson.D{}, a)
}

// fixWhere checks r on the documents of filter and repairs each finding
// as repair does (see followFix), as the scan emits it.
func (c *Checker) fixWhere(ctx context.Context, r rule, filter bson.D, a *Applied) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var failed error
	_, _, err := r.scan(sctx, c, filter, func(f Finding) {
		if failed != nil {
			return
		}
		fx, err := c.followFix(ctx, f)
		if err != nil {
			failed = err
			cancel(err)
			return
		}
		a.Fixes = append(a.Fixes, fx)
	})
	if failed != nil {
		return failed
	}
	return err
}

// followFix is the one call of the follower into repair's fix code
// (repairOne, repair.go): the guarded write, re-checked on a miss.
func (c *Checker) followFix(ctx context.Context, f Finding) (Fix, error) {
	got, out, err := c.repairOne(ctx, f, false)
	if err != nil {
		return Fix{}, fmt.Errorf("repair %s of %s _id %s: %w", got.Path, got.Collection, got.ID, err)
	}
	return Fix{Rule: got.Rule, Collection: got.Collection, ID: got.ID, Path: got.Path, Wrong: got.Stored, Right: rightOf(got), Outcome: out}, nil
}
