package runner

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version"
)

// backfillServerSide upgrades, with server-side updates only, the documents
// of coll at each version whose whole upgrade chain has an update-operator
// form (version.ServerPlan): no document travels. Each unit of the plan is
// one updateMany whose filter includes the version and the progress marker
// (version.MarkerField) and whose update advances the marker, so every
// document gets each unit exactly once, even across crashes and concurrent
// lazy upgrades (which resume from the marker). The last update sets the
// version and removes the marker in one write. Versions with a Go-only step
// (copy, func) are left to the client path, as are documents the server
// refuses to transform.
func (r *Runner) backfillServerSide(ctx context.Context, coll *mongo.Collection, name string, cb *CollectionBackfill) error {
	target := r.registry.Current(name)
	for _, from := range r.registry.Versions(name) {
		if from >= target {
			continue
		}
		plan, ok := r.registry.ServerPlan(name, from)
		if !ok {
			continue
		}
		n, err := r.runPlan(ctx, coll, plan, cb)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// The server refused a unit for some document: the client path
			// walks what is left (resuming marked documents) and reports it.
			cb.ServerSideNote = fmt.Sprintf("server-side upgrade from version %d stopped (%v); the rest went through the client", from, err)
			continue
		}
		cb.Upgraded += n
		cb.ServerSide += n
	}
	return nil
}

func (r *Runner) versionMatch(v int64) bson.D {
	f := r.cfg.versionField
	if v == 0 {
		return bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: f, Value: nil}},
			bson.D{{Key: f, Value: 0}},
		}}}
	}
	return bson.D{{Key: f, Value: v}}
}

func markerMatch(k int) bson.D {
	if k == 0 {
		return bson.D{{Key: version.MarkerField, Value: bson.D{{Key: "$exists", Value: false}}}}
	}
	return bson.D{{Key: version.MarkerField, Value: k}}
}

// withMarker adds $set {marker: k} to an update.
func withMarker(update bson.D, k int) bson.D {
	out := make(bson.D, 0, len(update)+1)
	added := false
	for _, e := range update {
		if e.Key == "$set" {
			set := append(append(bson.D{}, e.Value.(bson.D)...), bson.E{Key: version.MarkerField, Value: k})
			out = append(out, bson.E{Key: "$set", Value: set})
			added = true
			continue
		}
		out = append(out, e)
	}
	if !added {
		out = append(out, bson.E{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: k}}})
	}
	return out
}

func (r *Runner) runPlan(ctx context.Context, coll *mongo.Collection, p *version.ServerPlan, cb *CollectionBackfill) (int64, error) {
	vm := r.versionMatch(p.From)
	for k, u := range p.Units {
		filter := bson.D{{Key: "$and", Value: append(bson.A{vm, markerMatch(k)}, guardClauses(u.Guard)...)}}
		if _, err := coll.UpdateMany(ctx, filter, withMarker(u.Update, k+1)); err != nil {
			return 0, fmt.Errorf("unit %d of %d: %w", k+1, len(p.Units), err)
		}
		cb.RoundTrips++
		if len(u.Guard) > 0 {
			// Documents the guard excluded (a default whose field exists)
			// only advance.
			adv := bson.D{{Key: "$and", Value: bson.A{vm, markerMatch(k)}}}
			if _, err := coll.UpdateMany(ctx, adv, bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: k + 1}}}}); err != nil {
				return 0, fmt.Errorf("unit %d of %d: %w", k+1, len(p.Units), err)
			}
			cb.RoundTrips++
		}
		if r.hook != nil {
			r.hook("backfill.unit", p.From, k+1)
		}
	}
	final := bson.D{{Key: "$and", Value: bson.A{vm, markerMatch(len(p.Units))}}}
	res, err := coll.UpdateMany(ctx, final, bson.D{
		{Key: "$set", Value: bson.D{{Key: r.cfg.versionField, Value: versionNumber(p.To)}}},
		{Key: "$unset", Value: bson.D{{Key: version.MarkerField, Value: ""}}},
	})
	if err != nil {
		return 0, fmt.Errorf("final update: %w", err)
	}
	cb.RoundTrips++
	return res.ModifiedCount, nil
}

func guardClauses(g bson.D) bson.A {
	out := bson.A{}
	for _, e := range g {
		out = append(out, bson.D{e})
	}
	return out
}

// versionNumber stores versions as version.Stamp does.
func versionNumber(v int64) any {
	if v <= 1<<31-1 {
		return int32(v)
	}
	return v
}
