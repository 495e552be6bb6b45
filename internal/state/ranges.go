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

// A parallel backfill's documents: its plan, "<coll>$plan$<target>", and
// one checkpoint per range, "<coll>$range$<target>$<i>". A plan is
// inserted, never replaced: the first planner wins and every other process
// shares its ranges. A range checkpoint is written only by the holder of
// the range's lease.

// Plan is the stored split of a collection's _id space.
type Plan struct {
	ID     string `bson:"_id"`
	Target int64  `bson:"target"`
	Splits bson.A `bson:"splits"`
	// From says where the split points came from.
	From      string    `bson:"from"`
	CreatedAt time.Time `bson:"createdAt"`
}

func planKey(coll string, target int64) string { return fmt.Sprintf("%s$plan$%d", coll, target) }

// RangeKey is the _id of range i's checkpoint.
func RangeKey(coll string, target int64, i int) string {
	return fmt.Sprintf("%s$range$%d$%d", coll, target, i)
}

// MaxPlanSplits bounds the split points of a stored plan: a backfill
// splits into at most 4 ranges per worker and caps its workers far below
// (see backfill.MaxWorkers), so a plan with more was not stored by
// mongomig, and walking its ranges (a lease and a query each) would stall
// the backfill.
const MaxPlanSplits = 1024

// ErrForgedPlan is a stored plan mongomig cannot have written (see
// [PlanError]).
var ErrForgedPlan = errors.New("a stored backfill plan that mongomig did not write")

// PlanError names a stored plan refused for its shape.
type PlanError struct {
	ID     string // the plan document's _id in mongomig_backfill
	Splits int
}

func (e *PlanError) Error() string {
	return fmt.Sprintf("the backfill plan %q in %s has %d split points, more than the %d a backfill ever stores: it was not written by mongomig; remove that document (the next backfill plans again)", e.ID, Collection, e.Splits, MaxPlanSplits)
}

func (e *PlanError) Unwrap() error { return ErrForgedPlan }

// Plan reads coll's plan for target, nil if none was stored. A plan of
// more than MaxPlanSplits split points is refused ([*PlanError]).
func (s *Store) Plan(ctx context.Context, coll string, target int64) (*Plan, error) {
	var p Plan
	err := s.c.FindOne(ctx, byID(planKey(coll, target))).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the backfill plan of %s: %w", coll, err)
	}
	if len(p.Splits) > MaxPlanSplits {
		return nil, &PlanError{ID: p.ID, Splits: len(p.Splits)}
	}
	return &p, nil
}

// StorePlan inserts coll's plan for target with splits, unless another
// process stored one first: the plan returned is the one every process
// shares, and earlier says whether it is another's.
func (s *Store) StorePlan(ctx context.Context, coll string, target int64, splits bson.A, from string) (p *Plan, earlier bool, err error) {
	p = &Plan{ID: planKey(coll, target), Target: target, Splits: splits, From: from, CreatedAt: time.Now()}
	if _, err := s.c.InsertOne(ctx, p); err != nil {
		if !mongo.IsDuplicateKeyError(err) {
			return nil, false, fmt.Errorf("store the backfill plan of %s: %w", coll, err)
		}
		// Another process planned first: share its ranges.
		p, err = s.Plan(ctx, coll, target)
		if err == nil && p == nil {
			err = fmt.Errorf("read the backfill plan of %s: it was removed while this process stored its own", coll)
		}
		return p, true, err
	}
	return p, false, nil
}

// Range reads range i's checkpoint (a new one if none was stored).
func (s *Store) Range(ctx context.Context, coll string, target int64, i int) (Checkpoint, error) {
	key := RangeKey(coll, target, i)
	cp, err := s.read(ctx, key, fmt.Sprintf("backfill range %d of %s", i, coll))
	if err != nil || cp == nil {
		return Checkpoint{ID: key, Target: target}, err
	}
	return *cp, nil
}

// SaveRange writes range checkpoint cp's progress (fenced by the range's
// lease, which ctx carries).
func (s *Store) SaveRange(ctx context.Context, cp *Checkpoint) error {
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(cp.ID), bson.D{{Key: "$set", Value: bson.D{
			{Key: "target", Value: cp.Target}, {Key: "lastId", Value: cp.LastID}, {Key: "upgraded", Value: cp.Upgraded},
			{Key: "done", Value: cp.Done}, {Key: "updatedAt", Value: time.Now()},
		}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save backfill %s: %w", cp.ID, err)
	}
	return nil
}

// RangesDone reads which of the n ranges of coll's plan for target are
// finished.
func (s *Store) RangesDone(ctx context.Context, coll string, target int64, n int) (map[int]bool, error) {
	keys := bson.A{}
	byKey := map[string]int{}
	for i := 0; i < n; i++ {
		k := RangeKey(coll, target, i)
		keys = append(keys, k)
		byKey[k] = i
	}
	cur, err := s.c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: "done", Value: true}})
	if err != nil {
		return nil, fmt.Errorf("read the backfill ranges of %s: %w", coll, err)
	}
	var cps []Checkpoint
	if err := cur.All(ctx, &cps); err != nil {
		return nil, fmt.Errorf("read the backfill ranges of %s: %w", coll, err)
	}
	done := map[int]bool{}
	for _, c := range cps {
		done[byKey[c.ID]] = true
	}
	return done, nil
}

// RangesUpgraded is what the ranges of coll's backfill to target
// upgraded, in every run.
func (s *Store) RangesUpgraded(ctx context.Context, coll string, target int64) (int64, error) {
	prefix := "^" + regexp.QuoteMeta(fmt.Sprintf("%s$range$%d$", coll, target))
	cur, err := s.c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: prefix}}}},
		options.Find().SetProjection(bson.D{{Key: "upgraded", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("read the backfill ranges of %s: %w", coll, err)
	}
	var ranges []Checkpoint
	if err := cur.All(ctx, &ranges); err != nil {
		return 0, fmt.Errorf("read the backfill ranges of %s: %w", coll, err)
	}
	var n int64
	for _, rc := range ranges {
		n += rc.Upgraded
	}
	return n, nil
}

// DropRanges removes the range plans and range checkpoints of every
// target of coll (under the collection's lease, once a proof is saved).
func (s *Store) DropRanges(ctx context.Context, coll string) error {
	return fenced(ctx, func() error {
		if _, err := s.c.DeleteMany(ctx, rangesOf(coll)); err != nil {
			return fmt.Errorf("remove the range checkpoints of %s (the backfill is complete; they are only clutter, removed by the next one): %w", coll, err)
		}
		return nil
	})
}

// Plans are coll's stored plans, of every target: holding the leases of
// each plan's ranges (pkg/lease.BackfillRange of its target, indexes 0 to
// len(Splits)) excludes every range worker of coll.
func (s *Store) Plans(ctx context.Context, coll string) ([]Plan, error) {
	prefix := "^" + regexp.QuoteMeta(coll) + `\$plan\$`
	cur, err := s.c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: prefix}}}}, options.Find().SetSort(bson.D{{Key: "target", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the backfill plans of %s: %w", coll, err)
	}
	var plans []Plan
	if err := cur.All(ctx, &plans); err != nil {
		return nil, fmt.Errorf("read the backfill plans of %s: %w", coll, err)
	}
	for _, p := range plans {
		if len(p.Splits) > MaxPlanSplits {
			return nil, &PlanError{ID: p.ID, Splits: len(p.Splits)}
		}
	}
	return plans, nil
}
