package runner

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// docVersionAt is the document version of coll once migration v is
// applied: the last migration up to v that declares an upgrade for it.
func (r *Runner) docVersionAt(coll string, v int64) int64 {
	if r.registry.Current(coll) <= v {
		return r.registry.Current(coll)
	}
	return r.registry.Previous(coll, v+1)
}

// windowed wraps a collection's {$jsonSchema: S} validator in the
// validator window: a document passes if it is at the document version cv
// and satisfies S, or if it is at an older version (or has none) — while
// older documents may exist, during rolling deploys and before a backfill
// finishes. A collection without upgrades (cv 0) needs no window.
func (r *Runner) windowed(validator bson.D, cv int64) bson.D {
	if cv == 0 || validator == nil {
		return validator
	}
	f := r.cfg.versionField
	return bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: f, Value: cv}}, validator}}},
		bson.D{{Key: f, Value: bson.D{{Key: "$lt", Value: cv}}}},
		bson.D{{Key: f, Value: nil}},
	}}}
}

// windowAt is the windowed form of validator for coll as of migration at
// (used when reverting: documents are downgraded to that version).
func (r *Runner) windowAt(coll string, validator bson.D, at int64) bson.D {
	return r.windowed(validator, r.docVersionAt(coll, at))
}

// windowFor returns the validator to send for coll at migration v: the
// window while documents below the current version may exist, the plain
// schema once a backfill proved none remain.
func (r *Runner) windowFor(ctx context.Context, coll string, validator bson.D, v int64) (bson.D, error) {
	cv := r.docVersionAt(coll, v)
	if cv == 0 || validator == nil {
		return validator, nil
	}
	cp, err := r.readCheckpoint(ctx, coll)
	if err != nil {
		return nil, err
	}
	if cp != nil && cp.Proven && cp.Target == cv {
		return validator, nil
	}
	return r.windowed(validator, cv), nil
}

func (r *Runner) readCheckpoint(ctx context.Context, coll string) (*checkpoint, error) {
	var cp checkpoint
	err := r.db.Collection(BackfillCollection).FindOne(ctx, bson.D{{Key: "_id", Value: coll}}).Decode(&cp)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read backfill checkpoint of %s: %w", coll, err)
	}
	return &cp, nil
}

// tightenCommands closes the windows a backfill has proved unnecessary:
// for each collection whose applied validator is windowed, whose backfill
// proved no document below its current version remains, and which was not
// tightened yet, a collMod with the plain schema.
func (r *Runner) tightenCommands(ctx context.Context, applied map[int64]LedgerEntry) ([]Command, error) {
	var cmds []Command
	for _, name := range r.collectionsWithValidators(nil) {
		var latest int64
		for v := range applied {
			if m := r.migrationByVersion(v); m != nil && m.Collection(name) != nil && m.Collection(name).Validator != nil {
				latest = max(latest, v)
			}
		}
		if latest == 0 {
			continue
		}
		cv := r.docVersionAt(name, latest)
		if cv == 0 {
			continue
		}
		cp, err := r.readCheckpoint(ctx, name)
		if err != nil {
			return nil, err
		}
		if cp == nil || !cp.Proven || cp.Target != cv || cp.Tightened {
			continue
		}
		// Migrations after latest may already have raised the version.
		if r.docVersionAt(name, maxApplied(applied)) != cv {
			continue
		}
		cmd := collModCommand(name, bson.D{{Key: "validator", Value: r.migrationByVersion(latest).Collection(name).Validator}})
		cmd.Tighten = true
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

func maxApplied(applied map[int64]LedgerEntry) int64 {
	var m int64
	for v := range applied {
		m = max(m, v)
	}
	return m
}

// markTightened records that coll's window was closed.
func (r *Runner) markTightened(ctx context.Context, coll string) error {
	_, err := r.db.Collection(BackfillCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: coll}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "tightened", Value: true}}}}, options.UpdateOne())
	if err != nil {
		return fmt.Errorf("record the tightened validator of %s: %w", coll, err)
	}
	return nil
}
