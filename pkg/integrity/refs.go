package integrity

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// refRule: every value at Path of coll names a document of To.
type refRule struct {
	coll string
	ref  migration.Reference
	file string
}

func (r *refRule) info() RuleResult {
	return RuleResult{Rule: fmt.Sprintf("%s.%s -> %s", r.coll, r.ref.Path, r.ref.To), Kind: KindReference, Collection: r.coll, File: r.file}
}

func (r *refRule) top() string { top, _, _ := strings.Cut(r.ref.Path, "."); return top }

func (r *refRule) scan(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (int64, string, error) {
	if !c.opts.ClientOnly {
		n, err := r.server(ctx, c, filter, emit)
		if err == nil {
			return n, MethodServer, nil
		}
		if !notSupported(err) {
			return 0, "", err
		}
	}
	n, err := r.client(ctx, c, filter, emit)
	return n, MethodClient, err
}

// server finds the dangling references with one $lookup pipeline.
func (r *refRule) server(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (int64, error) {
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: filter}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$project", Value: bson.D{{Key: r.top(), Value: 1}, {Key: "__v", Value: "$" + r.ref.Path}}}},
		{{Key: "$unwind", Value: "$__v"}},
		{{Key: "$match", Value: bson.D{{Key: "__v", Value: bson.D{{Key: "$ne", Value: nil}}}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: r.ref.To}, {Key: "localField", Value: "__v"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "__m"}}}},
		{{Key: "$match", Value: bson.D{{Key: "__m", Value: bson.D{{Key: "$size", Value: 0}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "__m", Value: 0}}}},
	}
	cur, err := c.db.Collection(r.coll).Aggregate(ctx, pipeline)
	if err != nil {
		return 0, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		v := cur.Current.Lookup("__v")
		if v.Type == bson.TypeArray {
			// A path through nested arrays: unwound once, it is still an
			// array of references; check them on the client.
			n, err := r.client(ctx, c, bson.D{{Key: "_id", Value: cur.Current.Lookup("_id")}}, emit)
			_ = n
			if err != nil {
				return 0, err
			}
			continue
		}
		emit(r.finding(cur.Current, v))
	}
	if err := cur.Err(); err != nil {
		return 0, err
	}
	if len(filter) > 0 {
		return c.db.Collection(r.coll).CountDocuments(ctx, filter)
	}
	return c.db.Collection(r.coll).EstimatedDocumentCount(ctx)
}

// client reads the documents in batches and looks their references up
// with one $in query per batch.
func (r *refRule) client(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (int64, error) {
	return c.batches(ctx, r.coll, filter, bson.D{{Key: r.top(), Value: 1}}, func(docs []bson.Raw) error {
		var ids []bson.RawValue
		for _, d := range docs {
			ids = append(ids, refValues(d, r.ref.Path)...)
		}
		found, err := c.fetch(ctx, r.ref.To, distinct(ids), bson.D{{Key: "_id", Value: 1}})
		if err != nil {
			return err
		}
		for _, d := range docs {
			r.checkDoc(d, found, emit)
		}
		return nil
	})
}

// checkDoc emits doc's references that name none of found (by key).
func (r *refRule) checkDoc(doc bson.Raw, found map[string]bson.Raw, emit func(Finding)) {
	for _, v := range distinct(refValues(doc, r.ref.Path)) {
		if _, ok := found[key(v)]; !ok {
			emit(r.finding(doc, v))
		}
	}
}

func (r *refRule) finding(doc bson.Raw, v bson.RawValue) Finding {
	id := doc.Lookup("_id")
	f := Finding{Rule: r.info().Rule, Collection: r.coll, ID: bsonx.ExtJSONOf(id), id: id, Path: r.ref.Path, Problem: ProblemDangling, Stored: bsonx.ExtJSONOf(v)}
	if r.ref.OnDangling != migration.DanglingReport {
		f.fix = r.fix(doc, v)
	}
	return f
}

// fix removes the reference v (or deletes the document), guarded on the
// reference still being there, once the referenced document is looked up
// again and still missing.
func (r *refRule) fix(doc bson.Raw, v bson.RawValue) *fix {
	id := doc.Lookup("_id")
	fx := &fix{coll: r.coll, rescan: r, id: id, wrong: quote(v, true)}
	fx.precheck = func(ctx context.Context, c *Checker) (bool, error) {
		n, err := c.db.Collection(r.ref.To).CountDocuments(ctx, bson.D{{Key: "_id", Value: v}})
		return n == 0, err
	}
	fx.filter = bson.D{{Key: "_id", Value: id}, {Key: r.ref.Path, Value: v}}
	if r.ref.OnDangling == migration.DanglingDelete {
		fx.del = true
		fx.right = "(document deleted)"
		return fx
	}
	fx.right = "(reference removed)"
	// Where is the array, if any? Only one level of arrays is repaired.
	segs := strings.Split(r.ref.Path, ".")
	for i := range segs {
		at := strings.Join(segs[:i+1], ".")
		got, ok := lookup(doc, at)
		if !ok || got.Type != bson.TypeArray {
			continue
		}
		rest := strings.Join(segs[i+1:], ".")
		if rest == "" {
			fx.update = bson.D{{Key: "$pull", Value: bson.D{{Key: at, Value: v}}}}
		} else {
			fx.update = bson.D{{Key: "$pull", Value: bson.D{{Key: at, Value: bson.D{{Key: rest, Value: v}}}}}}
		}
		return fx
	}
	fx.filter = bson.D{{Key: "_id", Value: id}, guard(r.ref.Path, v, true)}
	fx.update = bson.D{{Key: "$unset", Value: bson.D{{Key: r.ref.Path, Value: ""}}}}
	return fx
}
