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
	// Hold, if set, is a filter clause the documents must match to get
	// this unit at all: those it excludes stay at the unit before it, for
	// the Go path to judge (a rename onto a target that holds a value: an
	// upgrade failure when the values differ, never a silent overwrite).
	Hold bson.D `json:"hold,omitempty"`
}

// ServerUpdates translates a declarative step into MongoDB update
// operators with the same effect, to run in order: set is one $set, unset
// one $unset, rename one $rename, default one $set per field guarded by
// {path: {$exists: false}}, in MongoDB's field order; a step with an
// empty operand needs no update at all. ok is false for steps no update
// operator expresses (copy, func), which must run in Go.
func ServerUpdates(s migration.Step) (updates []ServerUpdate, ok bool) {
	c, err := compileStep(s, nil, nil)
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

// MarkerField marks a document partway through a server-side upgrade. Its
// value is an object, {mongomig: "backfill", from: F, to: T, step: k}:
// k units of the [ServerPlan] from version F to version T were applied
// (see [ServerPlan.Marker]). Upgrade resumes such a document from there,
// so a document is never transformed twice, whoever finishes it.
//
// The marker protocol's invariants (this package owns them):
//  1. A document carries a marker only while it is at the version its
//     plan starts from: every unit's filter names that version (with
//     [Registry.VersionIs]) and the exact marker ([ServerPlan.MarkerIs]),
//     and the last unit sets the new version and removes the marker in
//     the same write.
//  2. Every write-back ([DeltaOf], [Registry.WriteBack]) guards the
//     marker: it matches only if the marker is as it was read, so a
//     server-side step that ran since the read makes it match nothing.
//  3. A marker is trusted only in that exact shape, with from equal to the
//     document's version, to above it, and k no more than the plan's
//     units. Any other value of the field (a number, a user's own field of
//     that name, a marker for another version) is a [*MarkerError] naming
//     the _id: the document is neither upgraded nor changed, and the
//     server-side backfill, whose filters name the exact marker, never
//     touches it. A marker on a document at the current version is read
//     only for its target: a well-formed marker leading past the current
//     version is a [*TooNewError] (a backfill of newer migrations left the
//     document partway, and its shape is half new under the old version
//     number); any other is ignored and the document returned as is
//     (nothing can resume from it: a later upgrade checks from). The same
//     holds for a marker leading past the current version on a document
//     below it, on every read path ([Registry.UpgradeRaw]'s fast path
//     takes only documents without a marker).
//  4. Where the server has pipeline updates the backfill writes no marker
//     at all ([PipelinePlan]); markers remain only where it has none. A
//     backfill resumes only from a marker carrying the nonce it keeps for
//     the plan ([MarkerInfo.Nonce]).
const MarkerField = "_mongomig_step"

// markerTag is the value of a marker's "mongomig" key.
const markerTag = "backfill"

// MarkerError is a document whose MarkerField does not hold a marker this
// registry can resume from (invariant 3 of [MarkerField]).
type MarkerError struct {
	Collection string
	ID         any
	Found      string // the field's value, as extended JSON
	Reason     string // what is wrong and what to do
}

func (e *MarkerError) Error() string {
	return fmt.Sprintf("%s document %s: %s = %s %s", e.Collection, idString(e.ID), MarkerField, e.Found, e.Reason)
}

// Marker is the value of MarkerField once k units of p are applied; with
// p.Nonce set, it carries the nonce too ({..., nonce: N}).
func (p *ServerPlan) Marker(k int) bson.D {
	m := bson.D{
		{Key: "mongomig", Value: markerTag},
		{Key: "from", Value: versionValue(p.From)},
		{Key: "to", Value: versionValue(p.To)},
		{Key: "step", Value: int32(k)},
	}
	if p.Nonce != "" {
		m = append(m, bson.E{Key: "nonce", Value: p.Nonce})
	}
	return m
}

// MarkerInfo is what a well-formed MarkerField value says.
type MarkerInfo struct {
	From, To, Step int64
	// Nonce is the plan's nonce ("" in a marker without one): a backfill
	// trusts a marker only if its nonce is the one it keeps for the plan
	// (see internal/state), so a marker the application wrote (or forged)
	// is never resumed from by a backfill.
	Nonce string
}

// ParseMarker reads a MarkerField value; false when it is not of the
// shape [ServerPlan.Marker] writes.
func ParseMarker(v any) (MarkerInfo, bool) {
	m, ok := parseMarker(v)
	return MarkerInfo{From: m.from, To: m.to, Step: m.step, Nonce: m.nonce}, ok
}

// markerTooNew is the TooNewError of a document whose well-formed marker
// leads past the current version cur (a backfill of newer migrations
// left it partway): the application is older than the data.
func markerTooNew(coll string, doc bson.D, mk any, cur int64) error {
	m, ok := parseMarker(mk)
	if !ok || m.to <= cur {
		return nil
	}
	id, _ := lookupD(doc, "_id")
	return &TooNewError{Collection: coll, ID: id, Version: m.to, Current: cur}
}

// Marked is the filter matching the documents that carry a backfill
// marker of any plan: MarkerField holds an object (never an array) whose
// "mongomig" is the tag and whose from, to and step are non-negative
// whole numbers (none of them an array; see the version rule in
// filter.go), the shape [ServerPlan.Marker] writes.
// A field of that name holding anything else (a string, the tag alone, a
// marker in an array) is the application's own or a marker nothing
// resumes from, and is not matched: the server-side backfill, whose
// filters name the exact marker, would never clear it. What no filter
// tells without $expr is left to invariant 3 of MarkerField: an object of
// that shape with more keys, or a from that is not the document's
// version, is still matched.
func Marked() bson.D {
	num := bson.D{{Key: "$type", Value: bson.A{"int", "long", "double"}}, {Key: "$gte", Value: 0}, whole, notArray[0]}
	return bson.D{
		{Key: MarkerField, Value: bson.D{{Key: "$type", Value: "object"}, notArray[0]}},
		{Key: MarkerField + ".mongomig", Value: bson.D{{Key: "$eq", Value: markerTag}, notArray[0]}},
		{Key: MarkerField + ".from", Value: num},
		{Key: MarkerField + ".to", Value: num},
		{Key: MarkerField + ".step", Value: num},
	}
}

// MarkerIs is the filter clause matching the documents whose marker is
// exactly p.Marker(k) (never an array holding it); for k = 0, those
// without a marker.
func (p *ServerPlan) MarkerIs(k int) bson.D {
	if k == 0 {
		return bson.D{{Key: MarkerField, Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	return bson.D{{Key: MarkerField, Value: bson.D{{Key: "$eq", Value: p.Marker(k)}, notArray[0]}}}
}

// repeatedMarker holds the values of a MarkerField that a document has
// more than once (raw BSON can): never trusted.
type repeatedMarker []any

// marker is a parsed MarkerField value.
type marker struct {
	from, to, step int64
	nonce          string
}

// parseMarker accepts exactly the shape ServerPlan.Marker writes, keys in
// any order (bson.M has none), numbers of any version type.
func parseMarker(v any) (marker, bool) {
	var d bson.D
	switch t := v.(type) {
	case bson.D:
		d = t
	case bson.M:
		d = mToD(t)
	default:
		return marker{}, false
	}
	if len(d) != 4 && len(d) != 5 {
		return marker{}, false
	}
	var m marker
	seen := 0
	for _, e := range d {
		n, ok := versionOf(e.Value, true)
		ok = ok && !isNull(e.Value)
		switch {
		case e.Key == "mongomig" && e.Value == markerTag:
			seen |= 1
			continue
		case e.Key == "nonce" && len(d) == 5:
			s, isString := e.Value.(string)
			if !isString || s == "" {
				return marker{}, false
			}
			m.nonce, seen = s, seen|16
			continue
		case !ok:
			return marker{}, false
		case e.Key == "from":
			m.from, seen = n, seen|2
		case e.Key == "to":
			m.to, seen = n, seen|4
		case e.Key == "step":
			m.step, seen = n, seen|8
		default:
			return marker{}, false
		}
	}
	return m, seen == 15 || (seen == 31 && len(d) == 5)
}

// ServerPlan is the upgrade chain of a collection from one version, as
// server-side updates: Units in order, each with its Go equivalent.
type ServerPlan struct {
	Collection string
	From, To   int64
	Units      []ServerUpdate
	// Nonce, set by the backfill from its own state, goes into every
	// marker it writes (see [MarkerInfo.Nonce]).
	Nonce   string
	goUnits []step
}

// planChain builds the server plan of ch from version from to version to;
// nil when a step has no update-operator form (copy, func).
func planChain(coll string, ch *chain, from, to int64) *ServerPlan {
	p := &ServerPlan{Collection: coll, From: from, To: to}
	for i := range ch.links {
		l := &ch.links[i]
		if l.version <= from || l.version > to {
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
				if s.op == migration.OpRename {
					ups[0].Hold = renameHold(s.fields)
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
	p := planChain(coll, ch, from, ch.current())
	return p, p != nil
}

// resume finishes the upgrade of a document a server-side backfill left
// partway (MarkerField holds mk): the Go equivalents of the plan's units
// from the marker's step, then the plan's target version, and the marker
// removed. at is the version out is at: the marker's target. A marker
// leading past the current version is a [*TooNewError]: an application
// older than the backfill's migrations cannot finish the document (it
// would serve a half-new shape under the old version number).
func (r *Registry) resume(coll string, ch *chain, doc bson.D, from int64, mk any) (out bson.D, at int64, err error) {
	id, _ := lookupD(doc, "_id")
	fail := func(reason string, args ...any) (bson.D, int64, error) {
		return nil, 0, &MarkerError{Collection: coll, ID: id, Found: valueText(mk), Reason: fmt.Sprintf(reason, args...)}
	}
	if rm, ok := mk.(repeatedMarker); ok {
		// MongoDB's filters see the first, bson.M and structs the last.
		mk = bson.A(rm)
		return fail("appears %d times, so which step the document is at is not known: check the document, keep one, and run backfill again", len(rm))
	}
	m, ok := parseMarker(mk)
	if !ok {
		return fail(`is not a marker of mongomig's server-side backfill ({mongomig: "backfill", from, to, step}), so it is not trusted and the document is not upgraded: rename the field if it is yours, then run backfill again`)
	}
	if m.from != from || m.to <= from {
		return fail("is for the upgrade from version %d to %d, but the document is at version %d: check the document, remove the field, and run backfill again", m.from, m.to, from)
	}
	if m.to > ch.current() {
		// A backfill of newer migrations left the document partway: this
		// application cannot finish it (hole 1 of issue 24).
		return nil, 0, &TooNewError{Collection: coll, ID: id, Version: m.to, Current: ch.current()}
	}
	if ch.find(m.to) == nil {
		return fail("names version %d, which no migration of %s raises documents to: check the document, remove the field, and run backfill again", m.to, coll)
	}
	at = m.to
	p := planChain(coll, ch, from, at)
	if p == nil || m.step > int64(len(p.Units)) {
		return fail("names step %d of the upgrade from version %d to %d, which these migrations do not have: check the document, remove the field, and run backfill again", m.step, from, m.to)
	}
	out = append(make(bson.D, 0, len(doc)+8), doc...)
	for i := int(m.step); i < len(p.goUnits); i++ {
		if out, err = p.goUnits[i].apply(out); err != nil {
			return nil, 0, &UpgradeError{Collection: coll, ID: id, From: from, Version: p.To, File: "(server-side backfill)", Step: i + 1, Op: string(p.goUnits[i].op), Err: err}
		}
	}
	out = unset(out, []string{MarkerField})
	out, _ = set(out, r.fieldPath, versionValue(at), r.field)
	return out, at, nil
}

// renameHold is the Hold of a rename unit: for each field, its source or
// its target is missing ($rename would otherwise replace the target).
func renameHold(fields []field) bson.D {
	missing := func(path string) bson.D {
		return bson.D{{Key: path, Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	and := bson.A{}
	for _, f := range fields {
		and = append(and, bson.D{{Key: "$or", Value: bson.A{missing(f.path), missing(f.to)}}})
	}
	return bson.D{{Key: "$and", Value: and}}
}
