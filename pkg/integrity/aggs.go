package integrity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// aggRule: a parent's Field holds the aggregate of its children.
type aggRule struct {
	coll string
	agg  migration.Aggregate
	file string
}

func (r *aggRule) info() RuleResult {
	what := r.agg.From
	if r.agg.Of != "" {
		what += "." + r.agg.Of
	}
	return RuleResult{Rule: fmt.Sprintf("%s.%s = %s(%s by %s)", r.coll, r.agg.Field, r.agg.Op, what, r.agg.By), Kind: KindAggregate, Collection: r.coll, File: r.file}
}

// scan reads the parents in batches; each batch's children are grouped
// on the server ($group over an $in of the batch's _ids) or, where the
// server has no $group, folded on the client.
func (r *aggRule) scan(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (int64, string, error) {
	method := MethodServer
	if c.opts.ClientOnly {
		method = MethodClient
	}
	n, err := c.batches(ctx, r.coll, filter, bson.D{{Key: r.agg.Field, Value: 1}}, func(docs []bson.Raw) error {
		ids := make(bson.A, len(docs))
		for i, d := range docs {
			ids[i] = d.Lookup("_id")
		}
		got, err := r.values(ctx, c, ids, &method)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if f, bad := r.compare(d, got); bad {
				emit(f)
			}
		}
		return nil
	})
	return n, method, err
}

// values are the aggregates of the parents ids, by parent: grouped on the
// server while *method is server, else (from the first refusal on)
// folded on the client.
func (r *aggRule) values(ctx context.Context, c *Checker, ids bson.A, method *string) (map[string]bson.RawValue, error) {
	if *method == MethodServer {
		got, err := r.group(ctx, c, ids)
		if !notSupported(err) {
			return got, err
		}
		*method = MethodClient
	}
	return r.fold(ctx, c, ids)
}

func (r *aggRule) accumulator() bson.D {
	switch r.agg.Op {
	case migration.AggCount:
		return bson.D{{Key: "$sum", Value: 1}}
	case migration.AggSum:
		return bson.D{{Key: "$sum", Value: "$" + r.agg.Of}}
	}
	return bson.D{{Key: "$" + string(r.agg.Op), Value: "$" + r.agg.Of}}
}

func (r *aggRule) childFilter(ids bson.A) bson.D {
	return bson.D{{Key: r.agg.By, Value: bson.D{{Key: "$in", Value: ids}}}}
}

// group is the batch's aggregates, by parent, from the server.
func (r *aggRule) group(ctx context.Context, c *Checker, ids bson.A) (map[string]bson.RawValue, error) {
	cur, err := c.db.Collection(r.agg.From).Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: r.childFilter(ids)}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + r.agg.By}, {Key: "v", Value: r.accumulator()}}}},
	})
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	out := map[string]bson.RawValue{}
	for cur.Next(ctx) {
		out[key(cur.Current.Lookup("_id"))] = cur.Current.Lookup("v")
	}
	return out, cur.Err()
}

// groupMany is group for several aggregates of one children's
// collection and key (a parent's count and max of its comments): one
// $group, an accumulator each; the values by parent, per aggregate.
func groupMany(ctx context.Context, c *Checker, rs []*aggRule, ids bson.A) ([]map[string]bson.RawValue, error) {
	group := bson.D{{Key: "_id", Value: "$" + rs[0].agg.By}}
	out := make([]map[string]bson.RawValue, len(rs))
	for i, r := range rs {
		group = append(group, bson.E{Key: "v" + strconv.Itoa(i), Value: r.accumulator()})
		out[i] = map[string]bson.RawValue{}
	}
	cur, err := c.db.Collection(rs[0].agg.From).Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: rs[0].childFilter(ids)}},
		{{Key: "$group", Value: group}},
	})
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		k := key(cur.Current.Lookup("_id"))
		for i := range rs {
			v := cur.Current.Lookup("v" + strconv.Itoa(i))
			out[i][k] = bson.RawValue{Type: v.Type, Value: slices.Clone(v.Value)}
		}
	}
	return out, cur.Err()
}

// fold is group on the client: the children's By and Of, streamed.
func (r *aggRule) fold(ctx context.Context, c *Checker, ids bson.A) (map[string]bson.RawValue, error) {
	proj := bson.D{{Key: r.agg.By, Value: 1}}
	if r.agg.Of != "" {
		proj = append(proj, bson.E{Key: r.agg.Of, Value: 1})
	}
	acc := map[string]*folder{}
	_, err := c.batches(ctx, r.agg.From, r.childFilter(ids), proj, func(kids []bson.Raw) error {
		for _, k := range kids {
			by, ok := lookup(k, r.agg.By)
			if !ok {
				continue
			}
			f := acc[key(by)]
			if f == nil {
				f = &folder{op: r.agg.Op}
				acc[key(by)] = f
			}
			v, vok := lookup(k, r.agg.Of)
			f.add(v, vok || r.agg.Op == migration.AggCount)
		}
		return nil
	})
	out := map[string]bson.RawValue{}
	for k, f := range acc {
		out[k] = f.value()
	}
	return out, err
}

// folder accumulates numbers as $sum, $min and $max do (non-numbers are
// left out of a sum, as $sum leaves them out).
type folder struct {
	op       migration.AggOp
	ints     int64
	floats   float64
	isFloat  bool
	best     bson.RawValue
	haveBest bool
}

func (f *folder) add(v bson.RawValue, ok bool) {
	switch f.op {
	case migration.AggCount:
		f.ints++
	case migration.AggSum:
		switch v.Type {
		case bson.TypeInt32:
			f.ints += int64(v.Int32())
		case bson.TypeInt64:
			f.ints += v.Int64()
		case bson.TypeDouble:
			f.floats, f.isFloat = f.floats+v.Double(), true
		}
	default:
		x, isNum := number(v)
		if !ok || !isNum {
			return
		}
		if !f.haveBest {
			f.best, f.haveBest = v, true
			return
		}
		y, _ := number(f.best)
		if d := x.Cmp(y); f.op == migration.AggMin && d < 0 || f.op == migration.AggMax && d > 0 {
			f.best = v
		}
	}
}

func (f *folder) value() bson.RawValue {
	switch {
	case f.op == migration.AggMin || f.op == migration.AggMax:
		if !f.haveBest {
			return rawOf(nil)
		}
		return f.best
	case f.isFloat:
		return rawOf(f.floats + float64(f.ints))
	case f.ints >= math.MinInt32 && f.ints <= math.MaxInt32:
		return rawOf(int32(f.ints))
	}
	return rawOf(f.ints)
}

// compare checks one parent: count and sum are 0 without children; min
// and max are then missing (null counts as missing).
func (r *aggRule) compare(doc bson.Raw, got map[string]bson.RawValue) (Finding, bool) {
	id := doc.Lookup("_id")
	want, wok := got[key(id)]
	if !wok && (r.agg.Op == migration.AggCount || r.agg.Op == migration.AggSum) {
		want, wok = rawOf(int32(0)), true
	}
	if wok && want.Type == bson.TypeNull {
		wok = false
	}
	cur, cok := lookup(doc, r.agg.Field)
	if cok && cur.Type == bson.TypeNull && !wok {
		return Finding{}, false
	}
	if cok == wok && (!cok || sameNumber(cur, want)) {
		return Finding{}, false
	}
	f := Finding{Rule: r.info().Rule, Collection: r.coll, ID: bsonx.ExtJSONOf(id), id: id, Path: r.agg.Field, Problem: ProblemDiffers,
		Stored: quote(cur, cok), Expected: quote(want, wok)}
	fx := &fix{coll: r.coll, id: id, rescan: r, wrong: f.Stored, right: f.Expected,
		filter: bson.D{{Key: "_id", Value: id}, guard(r.agg.Field, cur, cok)}}
	if wok {
		fx.update = bson.D{{Key: "$set", Value: bson.D{{Key: r.agg.Field, Value: want}}}}
	} else {
		fx.update = bson.D{{Key: "$unset", Value: bson.D{{Key: r.agg.Field, Value: ""}}}}
	}
	f.fix = fx
	return f, true
}
