package integrity

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// counterRule: the counter document's field is at or above the largest
// value of Path in coll.
type counterRule struct {
	coll string
	ctr  migration.Counter
	file string
}

func (r *counterRule) info() RuleResult {
	return RuleResult{Rule: fmt.Sprintf("%s[_id=%v].%s >= max(%s.%s)", r.ctr.In, r.ctr.ID, r.ctr.Field, r.coll, r.ctr.Path), Kind: KindCounter, Collection: r.ctr.In, File: r.file}
}

// scan reads the largest value used (through an index on Path, if any)
// and the counter.
func (r *counterRule) scan(ctx context.Context, c *Checker, _ bson.D, emit func(Finding)) (int64, string, error) {
	var used bson.Raw
	err := c.db.Collection(r.coll).FindOne(ctx, bson.D{{Key: r.ctr.Path, Value: bson.D{{Key: "$type", Value: "number"}}}},
		options.FindOne().SetSort(bson.D{{Key: r.ctr.Path, Value: -1}}).SetProjection(bson.D{{Key: r.ctr.Path, Value: 1}})).Decode(&used)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, MethodServer, nil
	}
	if err != nil {
		return 0, "", err
	}
	max, _ := lookup(used, r.ctr.Path)
	var ctr bson.Raw
	err = c.db.Collection(r.ctr.In).FindOne(ctx, bson.D{{Key: "_id", Value: r.ctr.ID}}, options.FindOne().SetProjection(bson.D{{Key: r.ctr.Field, Value: 1}})).Decode(&ctr)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return 0, "", err
	}
	cur, cok := bson.RawValue{}, false
	if ctr != nil {
		cur, cok = lookup(ctr, r.ctr.Field)
	}
	if cok {
		x, ok1 := number(cur)
		y, _ := number(max)
		if ok1 && x.Cmp(y) >= 0 {
			return 1, MethodServer, nil
		}
	}
	idRaw := rawOf(r.ctr.ID)
	f := Finding{Rule: r.info().Rule, Collection: r.ctr.In, ID: bsonx.ExtJSONOf(idRaw), id: idRaw, Path: r.ctr.Field, Problem: ProblemBehind,
		Stored: quote(cur, cok), Expected: quote(max, true)}
	// $max never lowers the counter: a concurrent $inc is kept.
	f.fix = &fix{coll: r.ctr.In, id: idRaw, rescan: r, wrong: f.Stored, right: f.Expected, upsert: true,
		filter: bson.D{{Key: "_id", Value: r.ctr.ID}}, update: bson.D{{Key: "$max", Value: bson.D{{Key: r.ctr.Field, Value: max}}}}}
	emit(f)
	return 1, MethodServer, nil
}

// rawOf is v as a RawValue.
func rawOf(v any) bson.RawValue {
	b, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		return bson.RawValue{}
	}
	return bson.Raw(b).Lookup("v")
}
