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

// repairRules walks the passes (pass.go), each from its stored progress:
// a pass a stopped repair finished is skipped; one it stopped in is
// scanned from above the last _id it handled (the findings of a pass come
// in _id order of its collection; a counter's are one document,
// rescanned).
func (c *Checker) repairRules(ctx context.Context, t *tally, dryRun bool) error {
	store := state.New(c.db)
	pace := &pacer{rate: c.opts.Rate}
	rep := t.rep
	for _, ps := range c.passes {
		name := ps.name()
		p := state.RepairProgress{ID: state.RepairKey(name), Rule: name}
		if !dryRun {
			var err error
			if p, err = store.RepairProgressOf(ctx, name); err != nil {
				return err
			}
		}
		if p.Done {
			rep.Resumed = true
			c.passSkipped(ps, p.Fixed)
			continue
		}
		filter := bson.D{}
		if p.LastID != nil && !ps.counter() {
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
		carried := p.Fixed
		w, err := c.repairPass(ctx, ps, filter, t, dryRun, pace, p.Fixed, save)
		p.Fixed = w.fixed
		if err != nil {
			return err
		}
		p.Done = true
		if !dryRun {
			if err := store.SaveRepairProgress(ctx, &p); err != nil {
				return err
			}
		}
		c.passProgress(ps, w.counts(), carried)
	}
	if dryRun {
		return nil
	}
	return store.ForgetRepair(ctx)
}

// counts are fixed and left per rule.
type counts map[string][2]int64

func (w *passWalk) counts() counts {
	out := counts{}
	for r, n := range w.byRule {
		out[r] = *n
	}
	return out
}

// passProgress tells Options.Progress the count of each rule of a pass
// that finished; carried (the fixes of the walks of it that stopped) is
// counted with its first rule: the progress stored is the pass's.
func (c *Checker) passProgress(ps *pass, n counts, carried int64) {
	for i, r := range ps.rules {
		got := n[r.info().Rule]
		if i == 0 {
			got[0] += carried
		}
		c.progress(RuleProgress{Rule: r.info().Rule, Fixed: got[0], Left: got[1]})
	}
}

// passSkipped tells Options.Progress the rules of a pass a stopped repair
// finished, its fixes counted with the first.
func (c *Checker) passSkipped(ps *pass, fixed int64) {
	for i, r := range ps.rules {
		if i > 0 {
			fixed = 0
		}
		c.progress(RuleProgress{Rule: r.info().Rule, Fixed: fixed, Skipped: true})
	}
}

func (c *Checker) progress(p RuleProgress) {
	if c.opts.Progress != nil {
		c.opts.Progress(p)
	}
}

// saveEvery spaces a repair's progress writes: a stopped repair re-reads
// at most this much of its work, which it finds in line.
var saveEvery = time.Second

// repairPass fixes one pass's findings of filter as the scan emits them
// (memory holds a batch of findings, not the pass's). save, when set, is
// told the _id of a document once all its findings are handled (as the
// next one begins or its batch ends, at most every saveEvery) and the
// fixes so far, from fixed. A counter's finding is one document: nothing
// to save.
func (c *Checker) repairPass(ctx context.Context, ps *pass, filter bson.D, t *tally, dryRun bool, pace *pacer,
	fixed int64, save func(last bson.RawValue, fixed int64) error) (*passWalk, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &passWalk{c: c, p: ps, t: t, dryRun: dryRun, pace: pace, fixed: fixed, save: save, saved: time.Now()}
	var failed error
	err := ps.scan(sctx, c, filter, func(f Finding) {
		if failed == nil {
			if failed = w.handle(ctx, f); failed != nil {
				cancel(failed)
			}
		}
	}, func(last bson.RawValue) error {
		if failed == nil {
			failed = w.batchEnd(ctx, last)
		}
		return failed
	}, w.carrier(ctx))
	if failed == nil && err == nil {
		failed = w.flush(ctx)
	}
	if failed == nil && err == nil {
		failed = w.verify(ctx)
	}
	if failed != nil {
		return w, failed
	}
	if err != nil {
		return w, fmt.Errorf("check %s: %w", ps, err)
	}
	return w, nil
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
