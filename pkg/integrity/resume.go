package integrity

import (
	"context"
	"fmt"
	"sync"
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
func (c *Checker) repairRules(ctx context.Context, t *tally, dryRun bool) error {
	store := state.New(c.db)
	pace := &pacer{rate: c.opts.Rate}
	rep := t.rep
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
			filter = after(p.LastID)
		}
		var save func(bson.RawValue, int64) error
		if !dryRun {
			save = func(last bson.RawValue, fixed int64) error {
				p.LastID, p.Fixed = last, fixed
				return store.SaveRepairProgress(ctx, &p)
			}
		}
		fixed, left, err := c.repairRule(ctx, r, filter, t, dryRun, pace, p.Fixed, save)
		p.Fixed = fixed
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

// saveEvery spaces a repair's progress writes: a stopped repair re-reads
// at most this much of its work, which it finds in line.
var saveEvery = time.Second

// repairRule fixes one rule's findings of filter as the scan emits them
// (memory holds a batch of findings, not the rule's). save, when set, is
// told the _id of a document once all its findings are handled (as the
// next one begins, at most every saveEvery) and the fixes so far, from
// fixed. A counter's finding is one document: nothing to save.
func (c *Checker) repairRule(ctx context.Context, r rule, filter bson.D, t *tally, dryRun bool, pace *pacer,
	fixed int64, save func(last bson.RawValue, fixed int64) error) (int64, int64, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &ruleWalk{c: c, r: r, t: t, dryRun: dryRun, pace: pace, fixed: fixed, save: save, saved: time.Now()}
	var failed error
	_, _, err := r.scan(sctx, c, filter, func(f Finding) {
		if failed == nil {
			if failed = w.handle(ctx, f); failed != nil {
				cancel(failed)
			}
		}
	})
	if failed == nil && err == nil {
		failed = w.flush(ctx)
	}
	if failed != nil {
		return w.fixed, w.left, failed
	}
	if err != nil {
		return w.fixed, w.left, fmt.Errorf("check %s: %w", r.info().Rule, err)
	}
	return w.fixed, w.left, nil
}

// tally collects a repair's fixes from its workers.
type tally struct {
	mu  sync.Mutex
	rep *RepairReport
	max int // fixes listed at most (-1: all)
}

func (t *tally) setResumed() {
	t.mu.Lock()
	t.rep.Resumed = true
	t.mu.Unlock()
}

func (t *tally) add(f Fix) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch f.Outcome {
	case OutcomeFixed, OutcomeWouldFix:
		t.rep.Fixed++
	case OutcomeInLine:
	default:
		t.rep.Left++
	}
	if t.max < 0 || len(t.rep.Fixes) < t.max {
		t.rep.Fixes = append(t.rep.Fixes, f)
	} else {
		t.rep.Truncated = true
	}
}

// pacer spaces a process's writes (all its workers') to rate per second.
type pacer struct {
	rate float64
	mu   sync.Mutex
	next time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	if p.rate <= 0 {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(time.Duration(float64(time.Second) / p.rate))
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
