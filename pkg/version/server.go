package version

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// ServerUpdate is a server-side update with the effect of (part of) a
// declarative step: run Update on the document, with Guard (if any) added
// to the filter.
type ServerUpdate struct {
	Guard  bson.D `json:"guard,omitempty"`
	Update bson.D `json:"update"`
}

// ServerUpdates translates a declarative step into MongoDB update
// operators with the same effect, to run in order: set is one $set, unset
// one $unset, rename one $rename, default one $set per field guarded by
// {path: {$exists: false}}, in MongoDB's field order; a step with an
// empty operand needs no update at all. ok is false for steps no update
// operator expresses (copy, func), which must run in Go.
func ServerUpdates(s migration.Step) (updates []ServerUpdate, ok bool) {
	c, err := compileStep(s, nil)
	if err != nil {
		return nil, false
	}
	if len(c.fields) == 0 {
		return nil, true // an empty operand: nothing to do
	}
	doc := func(value func(f field) any) bson.D {
		d := make(bson.D, 0, len(c.fields))
		for _, f := range c.fields {
			d = append(d, bson.E{Key: f.path, Value: value(f)})
		}
		return d
	}
	switch s.Op {
	case migration.OpSet:
		return []ServerUpdate{{Update: bson.D{{Key: "$set", Value: doc(func(f field) any { return f.value })}}}}, true
	case migration.OpUnset:
		return []ServerUpdate{{Update: bson.D{{Key: "$unset", Value: doc(func(field) any { return "" })}}}}, true
	case migration.OpRename:
		return []ServerUpdate{{Update: bson.D{{Key: "$rename", Value: doc(func(f field) any { return f.to })}}}}, true
	case migration.OpDefault:
		for _, f := range c.fields {
			updates = append(updates, ServerUpdate{
				Guard:  bson.D{{Key: f.path, Value: bson.D{{Key: "$exists", Value: false}}}},
				Update: bson.D{{Key: "$set", Value: bson.D{{Key: f.path, Value: f.value}}}},
			})
		}
		return updates, true
	}
	return nil, false
}

// MarkerField marks a document partway through a server-side upgrade: it
// holds how many units of its version's [ServerPlan] were applied. Upgrade
// resumes such a document from there, so a document is never transformed
// twice, whoever finishes it.
//
// The marker protocol's invariants (this package owns them):
//  1. A document carries a marker only while it is at the version its
//     plan starts from: every unit's filter names that version and the
//     marker's value, and the last unit sets the new version and removes
//     the marker in the same write.
//  2. Every write-back ([DeltaOf], [Registry.WriteBack]) guards the
//     marker: it matches only if the marker is as it was read, so a
//     server-side step that ran since the read makes it match nothing.
//  3. A marker on a current document is never trusted: Upgrade removes it
//     (and reports a change, so a write-back cleans the stored document).
const MarkerField = "_mongomig_step"

// ServerPlan is the upgrade chain of a collection from one version, as
// server-side updates: Units in order, each with its Go equivalent.
type ServerPlan struct {
	Collection string
	From, To   int64
	Units      []ServerUpdate
	goUnits    []step
}

// planChain builds the server plan of ch from version from; nil when a
// step has no update-operator form (copy, func).
func planChain(coll string, ch *chain, from int64) *ServerPlan {
	p := &ServerPlan{Collection: coll, From: from, To: ch.current()}
	for i := range ch.links {
		l := &ch.links[i]
		if l.version <= from {
			continue
		}
		if l.missing != "" {
			return nil
		}
		for _, s := range l.steps {
			if s.op != migration.OpFunc && len(s.fields) == 0 {
				continue // an empty operand: no unit
			}
			switch s.op {
			case migration.OpSet, migration.OpUnset, migration.OpRename:
				ups, ok := ServerUpdates(s.src)
				if !ok || len(ups) != 1 {
					return nil
				}
				p.Units = append(p.Units, ups[0])
				p.goUnits = append(p.goUnits, s)
			case migration.OpDefault:
				// One guarded update per field, in field order: each its own
				// unit, and its own Go step, so a resume lands between them.
				for _, f := range s.fields {
					one := s
					one.fields = []field{f}
					p.Units = append(p.Units, ServerUpdate{
						Guard:  bson.D{{Key: f.path, Value: bson.D{{Key: "$exists", Value: false}}}},
						Update: bson.D{{Key: "$set", Value: bson.D{{Key: f.path, Value: f.value}}}},
					})
					p.goUnits = append(p.goUnits, one)
				}
			default:
				return nil
			}
		}
	}
	if len(p.Units) == 0 {
		return nil
	}
	return p
}

// ServerPlan returns the server-side form of coll's upgrade from version
// from, or false when some step must run in Go (copy, func).
func (r *Registry) ServerPlan(coll string, from int64) (*ServerPlan, bool) {
	ch := r.chains[coll]
	if ch == nil || from >= ch.current() {
		return nil, false
	}
	p := planChain(coll, ch, from)
	return p, p != nil
}

// resume finishes the upgrade of a document a server-side backfill left
// partway (MarkerField = k): the Go equivalents of the plan's units from k,
// then the version, and the marker removed.
func (r *Registry) resume(coll string, doc bson.D, from int64, k any) (bson.D, error) {
	n, ok := versionOf(k, true)
	p, planned := r.ServerPlan(coll, from)
	if !ok || !planned || n < 0 || n > int64(len(p.Units)) {
		id, _ := lookupD(doc, "_id")
		return nil, fmt.Errorf("%s document %s: %s = %v does not match the upgrade from version %d; remove the field and run backfill again", coll, idString(id), MarkerField, k, from)
	}
	out := append(make(bson.D, 0, len(doc)+8), doc...)
	for i := int(n); i < len(p.goUnits); i++ {
		var err error
		if out, err = p.goUnits[i].apply(out); err != nil {
			id, _ := lookupD(doc, "_id")
			return nil, &UpgradeError{Collection: coll, ID: id, From: from, Version: p.To, File: "(server-side backfill)", Step: i + 1, Op: string(p.goUnits[i].op), Err: err}
		}
	}
	out = unset(out, []string{MarkerField})
	out, _ = set(out, r.fieldPath, versionValue(p.To), r.field)
	return out, nil
}
