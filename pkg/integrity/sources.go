package integrity

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A copy's fix is guarded on the document holding the copy, not on its
// source: the source may change between the repair's fetch and its write.
// An application that changes a source and then propagates it (Propagate)
// writes nothing to a copy that already holds the new value, so a repair
// whose write lands after that propagation would leave the copy at the
// value the source no longer has (a class's credits set back from 4 to 3:
// the student behind at 3 is "repaired" to 4). So the source is read again
// after each write that matched: changed, the document is re-checked. A
// source changed after that read is the application's propagation's to
// write (it reads the copy after its source write, and finds the repair's
// value).

// copySource is the source value a copy fix wrote.
type copySource struct {
	coll, field string
	id          bson.RawValue
	want        bson.RawValue
	ok          bool // want is a value (else the copy was unset)
}

// sourcesMoved reports, for each of fixes, whether its copy's source no
// longer holds the value written (false for a fix that is not a copy's):
// one $in per source collection.
func (c *Checker) sourcesMoved(ctx context.Context, fixes []*fix) ([]bool, error) {
	out := make([]bool, len(fixes))
	byColl := map[string][]int{}
	var colls []string
	for i, fx := range fixes {
		if fx.source == nil {
			continue
		}
		if byColl[fx.source.coll] == nil {
			colls = append(colls, fx.source.coll)
		}
		byColl[fx.source.coll] = append(byColl[fx.source.coll], i)
	}
	for _, coll := range colls {
		var ids []bson.RawValue
		proj := bson.D{{Key: "_id", Value: 1}}
		var fields []string
		for _, i := range byColl[coll] {
			s := fixes[i].source
			ids = append(ids, s.id)
			if s.field != "_id" && !slices.Contains(fields, s.field) {
				fields = append(fields, s.field)
				proj = append(proj, bson.E{Key: s.field, Value: 1})
			}
		}
		got, err := c.fetch(ctx, coll, distinct(ids), proj)
		if err != nil {
			return nil, err
		}
		for _, i := range byColl[coll] {
			out[i] = fixes[i].source.movedIn(got)
		}
	}
	return out, nil
}

// movedIn: the source, as fetched in got (by key), no longer holds the
// value written (gone: the reference rule's, re-checked).
func (s *copySource) movedIn(got map[string]bson.Raw) bool {
	doc, found := got[key(s.id)]
	if !found {
		return true
	}
	v, ok := lookup(doc, s.field)
	return ok != s.ok || ok && !same(v, s.want)
}

// movedIn is movedIn for each of fixes, fetched in joined (by
// collection).
func movedIn(fixes []*fix, joined map[string]map[string]bson.Raw) []bool {
	out := make([]bool, len(fixes))
	for i, fx := range fixes {
		out[i] = fx.source.movedIn(joined[fx.source.coll])
	}
	return out
}

// carrier hands a walk's copies written and not yet verified to the next
// batch's $in (pass.scan), so a pass of several rules reads its sources
// again at no cost but for its last batch.
type carrier struct {
	fixes func() []*fix
	moved func(moved []bool) error
}

// sourceMoved is sourcesMoved for one fix.
func (c *Checker) sourceMoved(ctx context.Context, fx *fix) (bool, error) {
	if fx.source == nil {
		return false, nil
	}
	moved, err := c.sourcesMoved(ctx, []*fix{fx})
	if err != nil {
		return false, err
	}
	return moved[0], nil
}
