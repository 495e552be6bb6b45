package integrity

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// copyRule: one copied field of a copy, beside the reference at Via.
type copyRule struct {
	coll  string
	cp    migration.Copy
	field migration.CopyField
	to    string
	file  string
	rule  string // info().Rule, set by rulesOf
}

func (r *copyRule) info() RuleResult {
	return RuleResult{Rule: fmt.Sprintf("%s.%s = %s.%s (%s)", r.coll, join(r.cp.Base(), r.field.Path), r.to, r.field.From, r.cp.Mode),
		Kind: KindCopy, Collection: r.coll, File: r.file}
}

func (r *copyRule) projection() bson.D {
	if r.cp.Base() == "" {
		return bson.D{{Key: r.cp.Via, Value: 1}, {Key: r.field.Path, Value: 1}}
	}
	top, _, _ := strings.Cut(r.cp.Base(), ".")
	return bson.D{{Key: top, Value: 1}}
}

// scan reads the documents in batches and fetches each batch's sources
// with one $in query.
func (r *copyRule) scan(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (int64, string, error) {
	n, err := c.batches(ctx, r.coll, filter, r.projection(), func(docs []bson.Raw) error {
		src, err := c.fetch(ctx, r.to, distinct(r.sources(docs)), bson.D{{Key: r.field.From, Value: 1}})
		if err != nil {
			return err
		}
		for _, d := range docs {
			r.checkDoc(d, src, emit)
		}
		return nil
	})
	return n, MethodClient, err
}

// sources are the references docs copy from (not distinct).
func (r *copyRule) sources(docs []bson.Raw) []bson.RawValue {
	var ids []bson.RawValue
	for _, d := range docs {
		for _, b := range bases(d, r.cp.Base()) {
			if v, ok := lookup(b.doc, r.cp.Key()); ok && v.Type != bson.TypeNull {
				ids = append(ids, v)
			}
		}
	}
	return ids
}

// checkDoc compares doc's copies with their sources in src (by key).
func (r *copyRule) checkDoc(doc bson.Raw, src map[string]bson.Raw, emit func(Finding)) {
	for _, b := range bases(doc, r.cp.Base()) {
		ref, ok := lookup(b.doc, r.cp.Key())
		if !ok {
			continue
		}
		s, found := src[key(ref)]
		if !found {
			continue // dangling: the reference rule reports it
		}
		if f, bad := r.compare(doc, b, s); bad {
			emit(f)
		}
	}
}

// compare checks one copy against its source document.
func (r *copyRule) compare(doc bson.Raw, b base, srcDoc bson.Raw) (Finding, bool) {
	id := doc.Lookup("_id")
	src, sok := lookup(srcDoc, r.field.From)
	cur, cok := lookup(b.doc, r.field.Path)
	path := join(b.at, r.field.Path)
	// The finding is built once something is out of line: most copies
	// are in line, and quoting a value costs more than comparing it.
	finding := func() Finding {
		return Finding{Rule: r.rule, Collection: r.coll, ID: bsonx.ExtJSONOf(id), id: id, Path: path, Stored: quote(cur, cok)}
	}
	if r.cp.Mode == migration.CopySnapshot {
		switch {
		case !cok:
			f := finding()
			f.Problem = ProblemMissing
			if sok {
				f.ExpectedType = typeClass(src.Type)
			}
			return f, true
		case sok && typeClass(src.Type) != typeClass(cur.Type):
			f := finding()
			f.Problem, f.ExpectedType = ProblemType, typeClass(src.Type)
			return f, true
		}
		return Finding{}, false
	}
	if sok == cok && (!sok || same(src, cur)) {
		return Finding{}, false
	}
	f := finding()
	f.Problem, f.Expected = ProblemDiffers, quote(src, sok)
	ref, _ := lookup(b.doc, r.cp.Key())
	fx := &fix{coll: r.coll, id: id, rescan: r, wrong: f.Stored, right: f.Expected,
		source: &copySource{coll: r.to, field: r.field.From, id: ref, want: src, ok: sok}}
	if b.at != r.cp.Base() && b.at != "" {
		// An element of an array: the write is guarded on the whole array
		// as read, so the index still names the element checked.
		arr, _ := lookup(doc, r.cp.Base())
		fx.filter = bson.D{{Key: "_id", Value: id}, guard(r.cp.Base(), arr, true)}
	} else {
		// A document (or the top): guarded on the reference too, so a
		// writer who pointed it at another source meanwhile keeps the
		// copy he wrote for that one.
		fx.filter = bson.D{{Key: "_id", Value: id}, guard(path, cur, cok)}
		if via := join(b.at, r.cp.Key()); via != path && via != "_id" {
			fx.filter = append(fx.filter, guard(via, ref, true))
		}
	}
	if sok {
		fx.update = bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: src}}}}
	} else {
		fx.update = bson.D{{Key: "$unset", Value: bson.D{{Key: path, Value: ""}}}}
	}
	f.fix = fx
	return f, true
}
