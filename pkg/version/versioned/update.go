package versioned

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
)

// maxUpgradeTries bounds how many times an update retries after
// upgrading the document it was meant for (another writer changing it
// in between each time).
const maxUpgradeTries = 3

// ConflictError is an update that found its document below the current
// version, upgraded it, and lost the race each time (another writer kept
// changing it): nothing of the update was applied.
type ConflictError struct {
	Collection string
	ID         any
	Tries      int
}

func (e *ConflictError) Error() string {
	if e.ID == nil {
		return fmt.Sprintf("%s: documents the update matches were upgraded %d times before the update, and changed by another writer each time; nothing of the update was applied: retry it", e.Collection, e.Tries)
	}
	return fmt.Sprintf("%s document %v: upgraded %d times before the update, and changed by another writer each time; nothing of the update was applied: retry it", e.Collection, e.ID, e.Tries)
}

// FindOneAndUpdate is mongo.Collection.FindOneAndUpdate on a document at
// the current version. A partial update ($set, $inc, a pipeline) of a
// document still at an older version would mix two shapes, and the
// upgrade that follows could then erase what the update wrote (a $set of
// contact.email that a rename of email would overwrite): so the update is
// sent filtered on the current version; when that matches nothing and a
// document below it matches the filter, that document is upgraded,
// written back (a guarded update, whatever the write-back policy), and
// the update sent again, at most three times (then a *ConflictError, and
// nothing of the update is applied). A document that cannot be upgraded
// (a *version.TooNewError, a *version.UpgradeError) is not updated: the
// result carries the error. A current document costs what the driver's
// call costs; an old one three more round trips.
//
// The document it returns (before or after the update, as the options
// say) is at the current version. With Upsert, an update document
// (bson.D, bson.M or bson.Raw) that does not name the version field gets
// $setOnInsert of the current version: a document it inserts is the
// application's, at the current version. An update pipeline is sent as
// is: stamp the version in it. An update that names the step marker
// (version.MarkerField) is refused and nothing is sent.
func (c *Collection) FindOneAndUpdate(ctx context.Context, filter, update any, opts ...options.Lister[options.FindOneAndUpdateOptions]) *SingleResult {
	if err := c.checkUpdate(update); err != nil {
		return &SingleResult{err: err} // before the update is sent
	}
	o := listed(opts)
	upsert := o.Upsert != nil && *o.Upsert
	if upsert {
		var err error
		if update, err = c.stampUpsert(filter, update); err != nil {
			return &SingleResult{err: err}
		}
	}
	after := o.ReturnDocument != nil && *o.ReturnDocument == options.After
	result := func(sr *mongo.SingleResult) *SingleResult {
		return &SingleResult{sr: sr, c: c, ctx: ctx, writeBack: after && o.Projection == nil}
	}
	if c.current == 0 {
		return result(c.coll.FindOneAndUpdate(ctx, filter, update, opts...))
	}
	noUpsert := append(append([]options.Lister[options.FindOneAndUpdateOptions](nil), opts...), options.FindOneAndUpdate().SetUpsert(false))
	var sr *mongo.SingleResult
	err := c.upgradeFirst(ctx, filter, o.Sort, o.Collation, func(f any) (bool, error) {
		sr = c.coll.FindOneAndUpdate(ctx, f, update, noUpsert...)
		if err := sr.Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return false, err
		}
		return sr.Err() == nil, nil
	})
	switch {
	case errors.Is(err, errNoOldDocument) && upsert:
		return result(c.coll.FindOneAndUpdate(ctx, c.currentFilter(filter), update, opts...))
	case errors.Is(err, errNoOldDocument):
		return result(sr) // mongo.ErrNoDocuments
	case err != nil:
		return &SingleResult{err: err}
	}
	return result(sr)
}

// UpdateOne is mongo.Collection.UpdateOne on a document at the current
// version, as [Collection.FindOneAndUpdate] sends it: filtered on the
// current version, an older document upgraded and written back first,
// the step marker refused, an upsert stamped.
func (c *Collection) UpdateOne(ctx context.Context, filter, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	if err := c.checkUpdate(update); err != nil {
		return nil, err
	}
	o := listed(opts)
	upsert := o.Upsert != nil && *o.Upsert
	if upsert {
		var err error
		if update, err = c.stampUpsert(filter, update); err != nil {
			return nil, err
		}
	}
	if c.current == 0 {
		return c.coll.UpdateOne(ctx, filter, update, opts...)
	}
	noUpsert := append(append([]options.Lister[options.UpdateOneOptions](nil), opts...), options.UpdateOne().SetUpsert(false))
	var res *mongo.UpdateResult
	err := c.upgradeFirst(ctx, filter, o.Sort, o.Collation, func(f any) (bool, error) {
		var err error
		res, err = c.coll.UpdateOne(ctx, f, update, noUpsert...)
		return err == nil && res.MatchedCount > 0, err
	})
	switch {
	case errors.Is(err, errNoOldDocument) && upsert:
		return c.coll.UpdateOne(ctx, c.currentFilter(filter), update, opts...)
	case errors.Is(err, errNoOldDocument):
		return res, nil // matched nothing
	case err != nil:
		return nil, err
	}
	return res, nil
}

// errNoOldDocument: the update matched no current document and no older
// one matches the filter either.
var errNoOldDocument = errors.New("no document matches")

// upgradeFirst runs send with the filter restricted to the current
// version until it matches (nil). When it does not, the first document
// below (or above) the current version that matches filter (in sort
// order) is upgraded and written back, and send runs again; with none,
// errNoOldDocument.
func (c *Collection) upgradeFirst(ctx context.Context, filter, sort any, collation *options.Collation, send func(filter any) (bool, error)) error {
	current := c.currentFilter(filter)
	notCurrent := bson.D{{Key: "$and", Value: bson.A{orEmpty(filter), c.reg.VersionNot(c.current)}}}
	find := options.FindOne()
	if sort != nil {
		find.SetSort(sort)
	}
	if collation != nil {
		find.SetCollation(collation)
	}
	for tries := 0; ; tries++ {
		matched, err := send(current)
		if err != nil || matched {
			return err
		}
		raw, err := c.coll.FindOne(ctx, notCurrent, find).Raw()
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return errNoOldDocument
		case err != nil:
			return err
		case tries == maxUpgradeTries:
			return &ConflictError{Collection: c.name, ID: idOf(raw), Tries: tries}
		}
		if err := c.upgradeInPlace(ctx, raw); err != nil {
			return err
		}
	}
}

// upgradeInPlace upgrades raw (a document as stored) and writes the
// upgrade back with the guarded update; a write-back that loses (another
// writer changed the document) is no error: the caller reads again.
func (c *Collection) upgradeInPlace(ctx context.Context, raw bson.Raw) error {
	up, changed, err := c.reg.UpgradeRaw(c.name, raw)
	if err != nil || !changed {
		return err
	}
	c.stats.upgraded.Add(1)
	var b, a bson.D
	if err := bson.Unmarshal(raw, &b); err != nil {
		return err
	}
	if err := bson.Unmarshal(up, &a); err != nil {
		return err
	}
	from, _ := c.reg.VersionOfRaw(raw)
	won, err := c.reg.WriteBack(ctx, c.coll, b, a)
	switch {
	case err != nil:
		c.stats.failed.Add(1)
		c.event(Event{Kind: Failed, ID: idOf(raw), From: from, To: c.current, Count: 1, Err: err})
		return err
	case won:
		c.stats.written.Add(1)
	default:
		c.stats.lost.Add(1)
	}
	c.event(Event{Kind: WroteBack, ID: idOf(raw), From: from, To: c.current, Won: won})
	return nil
}

// currentFilter is filter restricted to documents at the current version.
// The version clause is added to filter's own keys when it has none of
// that name, so that an upsert still copies filter's equalities into the
// document it inserts; otherwise both go under $and.
func (c *Collection) currentFilter(filter any) bson.D {
	is := c.reg.VersionIs(c.current)
	d, err := operand(orEmpty(filter))
	if err != nil {
		return bson.D{{Key: "$and", Value: bson.A{filter, is}}}
	}
	for _, e := range d {
		if e.Key == c.reg.Field() {
			return bson.D{{Key: "$and", Value: bson.A{d, is}}}
		}
	}
	return append(d[:len(d):len(d)], is...)
}

func orEmpty(filter any) any {
	if filter == nil {
		return bson.D{}
	}
	return filter
}

// checkUpdate refuses an update that names the step marker: mongomig
// alone writes it (see version.MarkerField), and a marker that came from
// application data would make the next migration's upgrade resume from
// it and skip steps. It checks the operators' field names ($rename's
// targets too) and the $set, $addFields and $project stages of a
// pipeline.
func (c *Collection) checkUpdate(update any) error {
	if err := c.reg.CheckCollection(c.name); err != nil {
		return err
	}
	var stages []any
	switch u := update.(type) {
	case bson.A:
		stages = u
	case []bson.D:
		for _, s := range u {
			stages = append(stages, s)
		}
	case mongo.Pipeline:
		for _, s := range u {
			stages = append(stages, s)
		}
	case []any:
		stages = u
	default:
		stages = []any{update}
	}
	for _, st := range stages {
		d, err := operand(st)
		if err != nil {
			continue // the server says why
		}
		for _, op := range d {
			if names(op.Value, op.Key == "$rename") {
				return fmt.Errorf("%s: the update writes %q, mongomig's backfill marker: an application never writes it (remove it from the update)", c.name, version.MarkerField)
			}
		}
	}
	return nil
}

// names reports whether an operator's operand names the marker (as a
// field, a path under it, or with values, a $rename target).
func names(operand any, values bool) bool {
	fields, err := operandFields(operand)
	if err != nil {
		return false
	}
	for _, f := range fields {
		if isMarker(f.Key) {
			return true
		}
		if s, ok := f.Value.(string); ok && values && isMarker(s) {
			return true
		}
	}
	return false
}

func isMarker(path string) bool {
	m := version.MarkerField
	return path == m || len(path) > len(m) && path[:len(m)] == m && path[len(m)] == '.'
}

// operandFields is operand for a value that may not be a document.
func operandFields(v any) (bson.D, error) {
	switch v.(type) {
	case bson.D, bson.M, bson.Raw, map[string]any:
		return operand(v)
	}
	return nil, errors.New("not a document")
}
