package state

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A repair's progress (pkg/integrity): "$repair$<rule>", one document per
// pass `mongomig repair` is walking (the rules of one collection, walked
// together, named by the last of them; a counter alone). A collection name never
// contains '$', so the key is no collection's checkpoint. It is written
// only by a repair holding the integrity repair lease (every write fenced
// by it), as a $set of its own fields. LastID is the _id of the rule's
// collection up to which (inclusive) every finding was handled: a resumed
// repair walks on from above it. Done is set when the rule's walk
// finished; [Store.ForgetRepair] removes them all once every rule is done,
// so the next repair starts over.

// RepairProgress is the stored progress of one rule's repair.
type RepairProgress struct {
	ID   string `bson:"_id"`
	Rule string `bson:"rule"`
	// LastID: nil, the walk starts from the lowest _id.
	LastID    any       `bson:"lastId"`
	Fixed     int64     `bson:"fixed"`
	Done      bool      `bson:"done"`
	UpdatedAt time.Time `bson:"updatedAt"`
}

// RepairKey is the _id of rule's repair progress.
func RepairKey(rule string) string { return "$repair$" + rule }

// RepairProgressOf reads rule's repair progress: a new one when none was
// stored.
func (s *Store) RepairProgressOf(ctx context.Context, rule string) (RepairProgress, error) {
	p := RepairProgress{}
	err := s.c.FindOne(ctx, byID(RepairKey(rule))).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return RepairProgress{ID: RepairKey(rule), Rule: rule}, nil
	}
	if err != nil {
		return p, fmt.Errorf("read the repair progress of %s: %w", rule, err)
	}
	return p, nil
}

// SaveRepairProgress writes p's fields (fenced by the lease ctx carries),
// creating the document if needed.
func (s *Store) SaveRepairProgress(ctx context.Context, p *RepairProgress) error {
	p.UpdatedAt = time.Now()
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(p.ID), bson.D{{Key: "$set", Value: bson.D{
			{Key: "rule", Value: p.Rule}, {Key: "lastId", Value: p.LastID}, {Key: "fixed", Value: p.Fixed},
			{Key: "done", Value: p.Done}, {Key: "updatedAt", Value: p.UpdatedAt},
		}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the repair progress of %s: %w", p.Rule, err)
	}
	return nil
}

// ForgetRepair removes every rule's repair progress (a repair that
// finished them all).
func (s *Store) ForgetRepair(ctx context.Context) error {
	return s.forgetPrefix(ctx, `^\$repair\$`, "the repair progress")
}

// forgetPrefix removes, fenced by the lease ctx carries, every document
// whose _id matches the regular expression prefix; what names them in
// the error.
func (s *Store) forgetPrefix(ctx context.Context, prefix, what string) error {
	return fenced(ctx, func() error {
		if _, err := s.c.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: prefix}}}}); err != nil {
			return fmt.Errorf("remove %s: %w", what, err)
		}
		return nil
	})
}

// DropRepairRanges removes the range checkpoints of plan (a repair's
// plan name, [RepairKey]) of target, before a new plan is stored for it
// (fenced by the lease ctx carries): a removal of the repair's progress
// that was cut (one delete, in _id order: a pass's plan goes before its
// ranges) leaves ranges marked done, which the new plan's are not.
func (s *Store) DropRepairRanges(ctx context.Context, plan string, target int64) error {
	prefix := "^" + regexp.QuoteMeta(fmt.Sprintf("%s$range$%d$", plan, target))
	return s.forgetPrefix(ctx, prefix, "the range checkpoints of "+plan)
}
