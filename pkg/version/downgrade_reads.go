package version

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// downgradeReads returns the top-level fields a downgrade's steps name (a
// rename's or copy's source and target, a default's, set's or unset's
// path) and whether it may read any field (a func step, or a func this
// binary lacks): what [Registry.DowngradeDeltaFor] guards beyond the
// fields the downgrade writes. Computed once per migration when the
// registry is built, as the upgrade's reads are (chain.index).
func downgradeReads(steps []step, missing string) (reads []string, all bool) {
	all = missing != ""
	for si := range steps {
		s := &steps[si]
		all = all || s.readsAny()
		for _, name := range s.reads {
			reads = appendNew(reads, name)
		}
		for fi := range s.fields {
			f := &s.fields[fi]
			reads = appendNew(reads, f.segs[0])
			if f.toSg != nil {
				reads = appendNew(reads, f.toSg[0])
			}
		}
	}
	return reads, all
}

// DowngradeDeltaFor is the guarded update that writes back the downgrade
// of before (a document of coll at version v, as read) into after (what
// [Registry.Downgrade] returned for it). It is [DeltaOf] (every field the
// downgrade changes, the version field among them, and the step marker,
// at their values as read) plus every top-level field migration v's
// downgrade steps name that it left alone (a rename's or copy's source, a
// default's path, their targets) at its value as read or absent, and every
// field as read when a func step runs.
//
// The invariant: the write matches only while every field the downgrade
// was computed from still holds what was read. A writer who changed one
// since (the application setting contact.email, which a downgrade copies
// back to email) makes it match nothing, so a value computed from the old
// one never overwrites his change; the caller re-reads the document and
// downgrades it again. One exception: a top-level name with a '.' or a
// leading '$' (MongoDB 5.0 stores them) cannot be named in a filter
// without $expr (it would be read as a path or an operator), so a func
// step's read of such a field is not guarded; guarding it as a path would
// make the write match nothing, every time.
//
// Its guards on arrays are [ExactArrays]'s; [Registry.DowngradeDeltaForOn]
// writes them as a server needs.
func (r *Registry) DowngradeDeltaFor(coll string, before, after bson.D, v int64) (Delta, error) {
	return r.DowngradeDeltaForOn(coll, before, after, v, ExactArrays)
}

// DowngradeDeltaForOn is [Registry.DowngradeDeltaFor] with the guards on
// arrays a says (see [ArraysOf]).
func (r *Registry) DowngradeDeltaForOn(coll string, before, after bson.D, v int64, a Arrays) (Delta, error) {
	l := r.chains[coll].find(v)
	if l == nil || !l.hasDown {
		return Delta{}, fmt.Errorf("migration %d declares no downgrade for %s", v, coll)
	}
	d, err := DeltaOfFor(before, after, a)
	if err != nil || d.Empty() {
		return d, err
	}
	b := deltaBuf{arrays: a} // empty: each guard's sub-document is allocated alone
	guardRead := func(k string) {
		if k == "_id" || hasKey(d.Filter, k) || !filterable(k) {
			return
		}
		old, had := lookupD(before, k)
		d.Filter = append(d.Filter, b.guard(k, old, had))
	}
	for _, k := range l.downReads {
		guardRead(k)
	}
	if l.downReadsAll {
		for _, e := range before {
			guardRead(e.Key)
		}
	}
	return d, nil
}

// filterable reports whether a top-level field name can be a filter's key:
// not an operator, not a path.
func filterable(k string) bool {
	return k != "" && k[0] != '$' && !containsDot(k)
}

// MissingDowngradeFunc returns the name of a Go function that a downgrade
// step of coll's migration v names and the registry does not have (built
// with [AllowMissingFuncs]), or "": documents at v cannot be downgraded by
// this program.
func (r *Registry) MissingDowngradeFunc(coll string, v int64) string {
	if l := r.chains[coll].find(v); l != nil {
		return l.missingDown
	}
	return ""
}
