package integrity

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/state"
)

// RepairLease is the name of the lease a repair of database db holds.
func RepairLease(db string) string { return "integrity-repair:" + db }

// RuleProgress is one rule's count, as a repair finishes it.
type RuleProgress struct {
	Rule  string `json:"rule"`
	Fixed int64  `json:"fixed"`
	Left  int64  `json:"left"`
	// Skipped: a stopped repair had finished this rule already.
	Skipped bool `json:"skipped,omitempty"`
}

// repairRules walks the rules, each from its stored progress: a rule a
// stopped repair finished is skipped; one it stopped in is scanned from
// above the last _id it handled (the findings of a rule come in _id
// order of its collection; a counter's are one document, rescanned).
func (c *Checker) repairRules(ctx context.Context, rep *RepairReport, dryRun bool) error {
	store := state.New(c.db)
	pace := pacer{rate: c.opts.Rate}
	for _, r := range c.rules {
		name := r.info().Rule
		p := state.RepairProgress{ID: state.RepairKey(name), Rule: name}
		if !dryRun {
			var err error
			if p, err = store.RepairProgressOf(ctx, name); err != nil {
				return err
			}
		}
		if p.Done {
			rep.Resumed = true
			c.progress(RuleProgress{Rule: name, Fixed: p.Fixed, Skipped: true})
			continue
		}
		filter := bson.D{}
		if p.LastID != nil && r.info().Kind != KindCounter {
			rep.Resumed = true
			filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: p.LastID}}}}
		}
		left, err := c.repairRule(ctx, r, filter, &p, rep, dryRun, &pace, store)
		if err != nil {
			return err
		}
		p.Done = true
		if !dryRun {
			if err := store.SaveRepairProgress(ctx, &p); err != nil {
				return err
			}
		}
		c.progress(RuleProgress{Rule: name, Fixed: p.Fixed, Left: left})
	}
	if dryRun {
		return nil
	}
	return store.ForgetRepair(ctx)
}

func (c *Checker) progress(p RuleProgress) {
	if c.opts.Progress != nil {
		c.opts.Progress(p)
	}
}

// repairRule fixes one rule's findings of filter; it stores the _id of a
// document once all its findings are handled, as the next one begins.
func (c *Checker) repairRule(ctx context.Context, r rule, filter bson.D, p *state.RepairProgress, rep *RepairReport, dryRun bool, pace *pacer, store *state.Store) (left int64, err error) {
	var found []Finding
	if _, _, err := r.scan(ctx, c, filter, func(f Finding) { found = append(found, f) }); err != nil {
		return 0, fmt.Errorf("check %s: %w", r.info().Rule, err)
	}
	for i, f := range found {
		if i > 0 && !dryRun && r.info().Kind != KindCounter && key(found[i-1].id) != key(f.id) {
			p.LastID = found[i-1].id
			if err := store.SaveRepairProgress(ctx, p); err != nil {
				return left, err
			}
		}
		if f.fix != nil && !dryRun {
			if err := pace.wait(ctx); err != nil {
				return left, err
			}
		}
		f, out, err := c.repairOne(ctx, f, dryRun)
		if err != nil {
			return left, fmt.Errorf("repair %s of %s _id %s: %w", f.Path, f.Collection, f.ID, err)
		}
		if out == OutcomeFixed || out == OutcomeWouldFix {
			rep.Fixed++
			p.Fixed++
		} else if out != OutcomeInLine {
			rep.Left++
			left++
		}
		rep.Fixes = append(rep.Fixes, Fix{Rule: f.Rule, Collection: f.Collection, ID: f.ID, Path: f.Path, Wrong: f.Stored, Right: rightOf(f), Outcome: out})
	}
	return left, nil
}

// pacer spaces writes to rate per second.
type pacer struct {
	rate float64
	next time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	if p.rate <= 0 {
		return nil
	}
	now := time.Now()
	if p.next.After(now) {
		t := time.NewTimer(p.next.Sub(now))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now = p.next
	}
	p.next = now.Add(time.Duration(float64(time.Second) / p.rate))
	return nil
}
