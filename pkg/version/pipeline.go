package version

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// PipelinePlan is the whole upgrade of a collection from one version to
// the current one as ONE update with an aggregation pipeline: every step
// and the new version in a single write, which a server that has pipeline
// updates applies to each document atomically. No document is ever
// between two steps, so there is no progress marker, and a reader sees the
// old document or the new one, never a half-upgraded one.
//
// Pipeline reproduces the Go steps exactly only for documents of a
// certain shape; Eligible is the filter clause that selects them, to be
// added to the update's filter. The others are left for the client path,
// which upgrades (or refuses) them as the application would:
//   - every proper prefix of every path a step names (source and target)
//     is missing or an object in the stored document: an array, a scalar
//     or null there makes $set and $rename refuse or traverse, while the
//     pipeline would replace or map it;
//   - for a rename, the source or the target is missing: a rename onto a
//     target that holds a value is the client path's to judge (an upgrade
//     failure when the values differ), never a silent overwrite.
//
// The checks look at the stored document, so a plan exists only for
// chains whose paths do not overlap: no path a step names equals, or is a
// prefix of, a path another step (or the version field) names, so no
// step changes what a later one's condition looks at.
type PipelinePlan struct {
	Collection string
	From, To   int64
	Pipeline   bson.A
	Eligible   bson.D
}

// pipeOp is one field of a declarative step, in chain order.
type pipeOp struct {
	op       migration.Op
	src, dst []string // dst: rename's target
	value    any
}

// PipelinePlan returns the pipeline form of coll's upgrade from version
// from to the current version, or false when the chain has a step no
// pipeline expresses exactly (copy, func, a write through _id, a name
// starting with $, overlapping paths; see [PipelinePlan]).
func (r *Registry) PipelinePlan(coll string, from int64) (*PipelinePlan, bool) {
	ch := r.chains[coll]
	if ch == nil || from >= ch.current() {
		return nil, false
	}
	var ops []pipeOp
	for i := range ch.links {
		l := &ch.links[i]
		if l.version <= from {
			continue
		}
		if l.missing != "" {
			return nil, false
		}
		for _, s := range l.steps {
			if s.idPath != "" {
				return nil, false
			}
			switch s.op {
			case migration.OpSet, migration.OpDefault, migration.OpUnset, migration.OpRename:
			default:
				return nil, false // copy, func
			}
			for _, f := range s.fields {
				ops = append(ops, pipeOp{op: s.op, src: f.segs, dst: f.toSg, value: f.value})
			}
		}
	}
	if len(ops) == 0 || !pipelinePaths(ops, r.fieldPath) {
		return nil, false
	}
	p := &PipelinePlan{Collection: coll, From: from, To: ch.current()}
	var eligible bson.A
	for _, o := range ops {
		p.Pipeline = append(p.Pipeline, o.stages()...)
		eligible = append(eligible, prefixesPlain(o.src)...)
		if o.op == migration.OpRename {
			eligible = append(eligible, prefixesPlain(o.dst)...)
			eligible = append(eligible, bson.D{{Key: "$or", Value: bson.A{missingExpr(o.src), missingExpr(o.dst)}}})
		}
	}
	p.Pipeline = append(p.Pipeline, bson.D{{Key: "$set", Value: bson.D{{Key: r.field, Value: bson.D{{Key: "$literal", Value: versionValue(p.To)}}}}}})
	if len(eligible) > 0 {
		p.Eligible = bson.D{{Key: "$expr", Value: bson.D{{Key: "$and", Value: eligible}}}}
	}
	return p, true
}

// pipelinePaths reports whether ops can be expressed: no segment starts
// with $ or is empty, and no two paths (of different ops, or a rename's
// source and target, or any and the version field) are equal or one a
// prefix of the other.
func pipelinePaths(ops []pipeOp, versionField []string) bool {
	type owned struct {
		segs []string
		op   int
	}
	all := []owned{{versionField, -1}}
	for i, o := range ops {
		for _, p := range [][]string{o.src, o.dst} {
			if p == nil {
				continue
			}
			for _, s := range p {
				if s == "" || strings.HasPrefix(s, "$") {
					return false
				}
			}
			all = append(all, owned{p, i})
		}
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if overlaps(all[i].segs, all[j].segs) {
				return false
			}
		}
	}
	return true
}

// overlaps: a equals b or one is a prefix of the other.
func overlaps(a, b []string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fieldRef(segs []string) string { return "$" + strings.Join(segs, ".") }

func missingExpr(segs []string) bson.D {
	return bson.D{{Key: "$eq", Value: bson.A{bson.D{{Key: "$type", Value: fieldRef(segs)}}, "missing"}}}
}

// prefixesPlain are the conditions that each proper prefix of segs is
// missing or an object.
func prefixesPlain(segs []string) bson.A {
	var out bson.A
	for i := 1; i < len(segs); i++ {
		out = append(out, bson.D{{Key: "$in", Value: bson.A{bson.D{{Key: "$type", Value: fieldRef(segs[:i])}}, bson.A{"missing", "object"}}}})
	}
	return out
}

// setPath is the expression of the top-level field segs[0] once the value
// of expression v is set at segs, as $set does on an eligible document:
// an existing field replaced where it stands, a new one appended, missing
// parents created as objects.
func setPath(segs []string, v any) any {
	if len(segs) == 1 {
		return v
	}
	return bson.D{{Key: "$mergeObjects", Value: bson.A{
		fieldRef(segs[:1]),
		bson.D{{Key: segs[1], Value: setNested(segs[:2], segs[2:], v)}},
	}}}
}

func setNested(at, rest []string, v any) any {
	if len(rest) == 0 {
		return v
	}
	return bson.D{{Key: "$mergeObjects", Value: bson.A{
		fieldRef(at),
		bson.D{{Key: rest[0], Value: setNested(append(append([]string{}, at...), rest[0]), rest[1:], v)}},
	}}}
}

// stages are the pipeline stages of one op.
func (o pipeOp) stages() bson.A {
	top := o.src[0]
	switch o.op {
	case migration.OpSet:
		return bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: top, Value: setPath(o.src, bson.D{{Key: "$literal", Value: o.value}})}}}}}
	case migration.OpDefault:
		// Only where the field is missing ($exists: false; a null stays).
		v := bson.D{{Key: "$cond", Value: bson.A{missingExpr(o.src), bson.D{{Key: "$literal", Value: o.value}}, fieldRef(o.src)}}}
		return bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: top, Value: setPath(o.src, v)}}}}}
	case migration.OpUnset:
		return bson.A{bson.D{{Key: "$unset", Value: bson.A{strings.Join(o.src, ".")}}}}
	case migration.OpRename:
		// A missing source changes nothing: the target's top-level field
		// is kept as it is (a missing one stays missing).
		dtop := o.dst[0]
		v := bson.D{{Key: "$cond", Value: bson.A{missingExpr(o.src), fieldRef(o.dst[:1]), setPath(o.dst, fieldRef(o.src))}}}
		return bson.A{
			bson.D{{Key: "$set", Value: bson.D{{Key: dtop, Value: v}}}},
			bson.D{{Key: "$unset", Value: bson.A{strings.Join(o.src, ".")}}},
		}
	}
	return nil
}
