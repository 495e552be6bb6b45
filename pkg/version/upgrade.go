package version

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TooNewError is returned for a document whose version is newer than the
// registry knows: the application is older than the data.
type TooNewError struct {
	Collection string
	ID         any
	Version    int64
	Current    int64
}

func (e *TooNewError) Error() string {
	return fmt.Sprintf("%s document %s is at version %d, newer than the %d this application knows: the application is older than the data; deploy the application built with the newer migrations",
		e.Collection, idString(e.ID), e.Version, e.Current)
}

// UpgradeError is a document one of its upgrade steps cannot transform,
// such as a rename into a field that holds a string.
type UpgradeError struct {
	Collection string
	ID         any
	// From is the document's version; Version the migration whose step failed.
	From, Version int64
	File          string
	Step          int // 1-based
	Op            string
	Err           error
	// Down is set when the step is one of the migration's downgrade steps
	// ([Registry.Downgrade]).
	Down bool
}

func (e *UpgradeError) Error() string {
	verb, steps := "upgrade", ""
	if e.Down {
		verb, steps = "downgrade", "downgrade "
	}
	return fmt.Sprintf("%s %s document %s from version %d: %s %sstep %d (%s): %v",
		verb, e.Collection, idString(e.ID), e.From, e.File, steps, e.Step, e.Op, e.Err)
}

func (e *UpgradeError) Unwrap() error { return e.Err }

// VersionError is a version field that does not hold a version (a
// non-negative whole number; see [Registry.VersionIs]), or that appears
// more than once among the document's top-level keys.
type VersionError struct {
	Collection string
	ID         any
	Field      string
	Found      string
	// Count is how many times the field appears when it appears more than
	// once (0 otherwise).
	Count int
}

func (e *VersionError) Error() string {
	if e.Count > 1 {
		return fmt.Sprintf("%s document %s: field %q appears %d times (%s); drivers disagree on which one a read sees (Go's bson.D keeps all, bson.M and structs the last): replace the document with one that has a single %q",
			e.Collection, idString(e.ID), e.Field, e.Count, e.Found, e.Field)
	}
	return fmt.Sprintf("%s document %s: field %q holds %s, not a version number (a non-negative whole number: an int32, an int64, or a double without a fraction below 2^53); fix the document (a missing or null field means version 0)", e.Collection, idString(e.ID), e.Field, e.Found)
}

func idString(id any) string {
	if id == nil {
		return "(no _id)"
	}
	if oid, ok := id.(bson.ObjectID); ok {
		return "_id=ObjectId(" + oid.Hex() + ")"
	}
	return fmt.Sprintf("_id=%v", id)
}

// versionOf converts a version field's value. ok is false for values that
// are not versions: negative numbers, fractions and other types.
func versionOf(v any, present bool) (int64, bool) {
	if !present || isNull(v) {
		return 0, true // missing or null: before mongomig
	}
	switch n := v.(type) {
	case int32:
		return int64(n), n >= 0
	case int64:
		return n, n >= 0
	case int:
		return int64(n), n >= 0
	case float64:
		if n == math.Trunc(n) && n >= 0 && n < maxDouble {
			return int64(n), true
		}
	}
	return 0, false
}

// isNull reports whether v is BSON null in any form a program holds it:
// a Go nil (what the driver decodes null to) or bson.Null{}.
func isNull(v any) bool {
	switch v.(type) {
	case nil, bson.Null:
		return true
	}
	return false
}

// valueText shows a stored value in an error: its extended JSON (cut
// short) and its BSON type, as in `-1 (int)` or `[1,2] (array)`.
func valueText(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	text := "?"
	if err == nil && len(b) > len(`{"v":}`) {
		text = string(b[len(`{"v":`) : len(b)-1])
	}
	if len(text) > 60 {
		text = text[:57] + "..."
	}
	kind := "null"
	switch v.(type) {
	case nil:
		return text
	case bson.A:
		kind = "array"
	case bson.D:
		kind = "document"
	default:
		kind = bsonTypeName(v)
	}
	return text + " (" + kind + ")"
}

func lookupD(d bson.D, key string) (any, bool) {
	for i := range d {
		if d[i].Key == key {
			return d[i].Value, true
		}
	}
	return nil, false
}

// VersionOf returns the version of a document of coll: its version field,
// 0 when missing.
func (r *Registry) VersionOf(coll string, doc bson.D) (int64, error) {
	n, _, _, err := r.scanD(coll, doc)
	return n, err
}

// scanD reads, in one pass over doc's top-level keys, its version (a
// *VersionError when invalid or repeated) and its server-side backfill
// marker, if any.
func (r *Registry) scanD(coll string, doc bson.D) (from int64, marker any, marked bool, err error) {
	var vv any
	var vals []string
	count := 0
	for i := range doc {
		switch doc[i].Key {
		case r.field:
			if count == 0 {
				vv = doc[i].Value
			}
			count++
			if len(vals) < 3 {
				vals = append(vals, valueText(doc[i].Value))
			}
		case MarkerField:
			if rm, again := marker.(repeatedMarker); again {
				marker = append(rm, doc[i].Value)
			} else if marked {
				marker = repeatedMarker{marker, doc[i].Value}
			} else {
				marker, marked = doc[i].Value, true
			}
		}
	}
	from, ok := versionOf(vv, count > 0)
	switch {
	case count > 1:
		id, _ := lookupD(doc, "_id")
		return 0, nil, false, &VersionError{Collection: coll, ID: id, Field: r.field, Found: strings.Join(vals, ", "), Count: count}
	case !ok:
		id, _ := lookupD(doc, "_id")
		return 0, nil, false, &VersionError{Collection: coll, ID: id, Field: r.field, Found: valueText(vv)}
	}
	return from, marker, marked, nil
}

// Upgrade returns doc of collection coll upgraded to the current version,
// and whether anything changed. A document already current is returned as
// is. doc itself is never modified. A collection no migration names is an
// [ErrUnknownCollection] unless declared with [WithCollections].
func (r *Registry) Upgrade(coll string, doc bson.D) (bson.D, bool, error) {
	// One pass finds the version, checks it appears once, and finds a
	// server-side backfill's marker.
	from, marker, partway, err := r.scanD(coll, doc)
	if err != nil {
		return doc, false, err
	}
	ch := r.chains[coll]
	if ch == nil {
		if err := r.checkKnown(coll); err != nil {
			return doc, false, err
		}
	}
	cur := ch.current()
	if from == cur {
		// A marker on a current document is read only for where it leads:
		// past cur, a backfill of newer migrations left the document
		// partway (TooNewError); otherwise nothing resumes from it
		// (MarkerField, invariant 3) and the document is returned as is.
		if partway {
			if err := markerTooNew(coll, doc, marker, cur); err != nil {
				return doc, false, err
			}
		}
		return doc, false, nil
	}
	if from > cur {
		id, _ := lookupD(doc, "_id")
		return doc, false, &TooNewError{coll, id, from, cur}
	}
	if err := r.checkDuplicates(coll, ch, doc, from); err != nil {
		return doc, false, err
	}
	if partway {
		out, at, err := r.resume(coll, ch, doc, from, marker)
		if err != nil {
			return doc, false, err
		}
		if at == cur {
			return out, true, nil
		}
		// The marker's plan ended below the current version: the rest of
		// the chain runs as for any document at that version.
		up, _, err := r.upgradeFrom(coll, ch, out, at)
		if err != nil {
			return doc, false, err
		}
		return up, true, nil
	}
	return r.upgradeFrom(coll, ch, doc, from)
}

// upgradeFrom runs every upgrade of ch above version from on doc (not
// modified) and stamps the current version.
func (r *Registry) upgradeFrom(coll string, ch *chain, doc bson.D, from int64) (bson.D, bool, error) {
	cur := ch.current()
	if ch.keys != nil {
		return r.upgradeOverlay(coll, ch, doc, from)
	}
	extra := 1 // the version field
	for i := range ch.links {
		if ch.links[i].version > from {
			extra += ch.links[i].adds
		}
	}
	out := append(make(bson.D, 0, len(doc)+extra), doc...)
	for i := range ch.links {
		l := &ch.links[i]
		if l.version <= from {
			continue
		}
		var err error
		if out, err = r.applyLink(coll, l, out, from); err != nil {
			return doc, false, err
		}
	}
	out, _ = set(out, r.fieldPath, versionValue(cur), r.field)
	return out, true, nil
}

// upgradeOverlay is Upgrade through an overlay: the fields the chain
// names are located once, no step scans or shifts the document, and the
// result is written in one pass at the end.
func (r *Registry) upgradeOverlay(coll string, ch *chain, doc bson.D, from int64) (bson.D, bool, error) {
	var ov overlay
	ov.build(ch.keys, doc)
	for i := range ch.links {
		l := &ch.links[i]
		if l.version <= from {
			continue
		}
		if err := r.applyLinkOverlay(coll, l, &ov, from); err != nil {
			return doc, false, err
		}
	}
	ov.put(ch.versionSlot, versionValue(ch.current()))
	return ov.materialize(), true, nil
}

// ApplyOne applies only the upgrade that migration version declares for
// coll to doc (a document of the previous version), without touching the
// version field. Lint uses it to check a migration's examples.
func (r *Registry) ApplyOne(coll string, version int64, doc bson.D) (bson.D, error) {
	if l := r.chains[coll].find(version); l != nil {
		return r.applyLink(coll, l, append(make(bson.D, 0, len(doc)+4), doc...), r.Previous(coll, version))
	}
	return nil, fmt.Errorf("migration %d declares no upgrade for %s", version, coll)
}

// Downgrade turns a document of coll at version v (a migration declaring
// an upgrade for coll) back into one of the previous version with the
// migration's downgrade steps, and sets the version field to that previous
// version (removing it for version 0). doc is not modified.
func (r *Registry) Downgrade(coll string, v int64, doc bson.D) (bson.D, error) {
	l := r.chains[coll].find(v)
	if l == nil || !l.hasDown {
		return nil, fmt.Errorf("migration %d declares no downgrade for %s", v, coll)
	}
	down := *l
	down.steps, down.missing = l.down, l.missingDown
	if err := duplicateDownKeys(coll, &down, doc, v); err != nil {
		return nil, err
	}
	out, err := r.applyLink(coll, &down, append(make(bson.D, 0, len(doc)), doc...), v)
	if err != nil {
		var ue *UpgradeError
		if errors.As(err, &ue) {
			ue.Down = true
		}
		return nil, err
	}
	if prev := r.Previous(coll, v); prev > 0 {
		out, _ = set(out, r.fieldPath, versionValue(prev), r.field)
	} else {
		out = unset(out, r.fieldPath)
	}
	return out, nil
}

// applyLink runs l's steps on d (owned by the caller).
func (r *Registry) applyLink(coll string, l *link, d bson.D, from int64) (bson.D, error) {
	if l.missing != "" {
		id, _ := lookupD(d, "_id")
		return d, r.missingFunc(coll, l, id, from)
	}
	var err error
	for j := range l.steps {
		s := &l.steps[j]
		if d, err = s.apply(d); err != nil {
			id, _ := lookupD(d, "_id")
			return d, &UpgradeError{Collection: coll, ID: id, From: from, Version: l.version, File: l.file, Step: j + 1, Op: string(s.op), Err: err}
		}
	}
	return d, nil
}

// applyLinkOverlay is applyLink on an overlay; a func step gets the
// document materialized, and the overlay is rebuilt on what it returns.
func (r *Registry) applyLinkOverlay(coll string, l *link, ov *overlay, from int64) error {
	if l.missing != "" {
		id, _ := ov.lookup("_id")
		return r.missingFunc(coll, l, id, from)
	}
	for j := range l.steps {
		s := &l.steps[j]
		var err error
		if s.op == migration.OpFunc {
			var out bson.D
			if out, err = s.apply(ov.materialize()); err == nil {
				ov.build(ov.kt, out)
			}
		} else {
			err = s.applyOverlay(ov)
		}
		if err != nil {
			id, _ := ov.lookup("_id")
			return &UpgradeError{Collection: coll, ID: id, From: from, Version: l.version, File: l.file, Step: j + 1, Op: string(s.op), Err: err}
		}
	}
	return nil
}

// missingFunc is the error for a link whose func is not registered.
func (r *Registry) missingFunc(coll string, l *link, id any, from int64) error {
	stepNo := 0
	for j := range l.steps {
		if l.steps[j].op == migration.OpFunc && l.steps[j].name == l.missing && stepNo == 0 {
			stepNo = j + 1
		}
	}
	return &UpgradeError{Collection: coll, ID: id, From: from, Version: l.version, File: l.file, Step: stepNo, Op: "func",
		Err: fmt.Errorf("%w: %s (this program does not register it: see docs/lazy-upgrades.md)", ErrFuncNotRegistered, l.missing)}
}

// versionValue stores versions as int32 when they fit, as drivers write
// small integers.
func versionValue(v int64) any {
	if v <= math.MaxInt32 {
		return int32(v)
	}
	return v
}

// Stamp returns doc with the version field set to coll's current version,
// for a document the application is about to insert. doc is not
// modified. A version field doc repeats is left once (MongoDB stores a
// repeated field as sent, and no read accepts it: [VersionError]). A
// document written whole is current, so a step marker ([MarkerField]) in
// it (a bson.M built from a client's JSON, a document read through
// Unwrap) is dropped, as the version field it carried is replaced: a
// marker that reached the collection from application data would make
// the next migration's upgrade resume from it and skip steps. A
// collection no migration names is an [ErrUnknownCollection] unless
// declared with [WithCollections].
func (r *Registry) Stamp(coll string, doc bson.D) (bson.D, error) {
	ch := r.chains[coll]
	if ch == nil {
		if err := r.checkKnown(coll); err != nil {
			return nil, err
		}
	}
	out := make(bson.D, 0, len(doc)+1)
	for _, e := range doc {
		if e.Key != r.field && e.Key != MarkerField {
			out = append(out, e)
		}
	}
	if i := stampAt(doc, r.field); i >= 0 && i < len(out) {
		// Keep the field where it was.
		out = append(out[:i+1], out[i:]...)
		out[i] = bson.E{Key: r.field, Value: versionValue(ch.current())}
		return out, nil
	}
	return append(out, bson.E{Key: r.field, Value: versionValue(ch.current())}), nil
}

// stampAt is where the version field goes in Stamp's output: its
// position in doc less the markers before it (-1: not in doc).
func stampAt(doc bson.D, field string) int {
	markers := 0
	for i := range doc {
		switch doc[i].Key {
		case field:
			return i - markers
		case MarkerField:
			markers++
		}
	}
	return -1
}

// UpgradeM is [Registry.Upgrade] for bson.M. The result's embedded
// documents are bson.M too.
func (r *Registry) UpgradeM(coll string, doc bson.M) (bson.M, bool, error) {
	if r.chains[coll] == nil {
		if err := r.checkKnown(coll); err != nil {
			return doc, false, err
		}
	}
	v, present := doc[r.field]
	if n, ok := versionOf(v, present); ok && n == r.Current(coll) {
		if _, marked := doc[MarkerField]; !marked { // see UpgradeRaw
			return doc, false, nil
		}
	}
	up, changed, err := r.Upgrade(coll, mToD(doc))
	if err != nil || !changed {
		return doc, false, err
	}
	return dToM(up), true, nil
}

func mToD(m bson.M) bson.D {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := make(bson.D, len(keys))
	for i, k := range keys {
		d[i] = bson.E{Key: k, Value: mValueToD(m[k])}
	}
	return d
}

func mValueToD(v any) any {
	switch t := v.(type) {
	case bson.M:
		return mToD(t)
	case map[string]any:
		return mToD(bson.M(t))
	case bson.A:
		out := make(bson.A, len(t))
		for i, x := range t {
			out[i] = mValueToD(x)
		}
		return out
	case []any:
		return mValueToD(bson.A(t))
	}
	return v
}

func dToM(d bson.D) bson.M {
	m := make(bson.M, len(d))
	for _, e := range d {
		m[e.Key] = dValueToM(e.Value)
	}
	return m
}

func dValueToM(v any) any {
	switch t := v.(type) {
	case bson.D:
		return dToM(t)
	case bson.A:
		out := make(bson.A, len(t))
		for i, x := range t {
			out[i] = dValueToM(x)
		}
		return out
	}
	return v
}
