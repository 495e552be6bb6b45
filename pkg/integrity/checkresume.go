package integrity

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/lease"
)

// A resumable check (Options.Resumable) stores each rule's progress as it
// goes (internal/state: "$check$<rule>": the _id up to which every
// finding was counted, the count, the findings the report keeps, and,
// once the rule is walked, its row), at most every saveEvery, holding
// [CheckLease] throughout (every write fenced by it). A check that was
// stopped (a crash, a cancelled context) leaves it; the next resumable
// check takes the rows of the rules done from it and walks the rule it
// stopped in from above that _id, so it reports what an uninterrupted
// check would have (the same rows, findings and order), reading each
// document once. A counter is one document: rechecked. The check that
// finishes every rule forgets the progress, so the next one starts over.

// CheckLease is the name of the lease a resumable check of database db
// holds.
func CheckLease(db string) string { return "integrity-check:" + db }

func (c *Checker) checkResumable(ctx context.Context) (*Report, error) {
	var rep *Report
	err := lease.With(ctx, c.opts.Leases, CheckLease(c.db.Name()), c.opts.LeaseWait, func(lctx context.Context) error {
		store := state.New(c.db)
		if _, err := store.BeginCheck(lctx); err != nil {
			return err
		}
		rep = &Report{Database: c.db.Name(), Rules: []RuleResult{}, Findings: []Finding{}}
		for _, r := range c.rules {
			res, err := c.checkRuleResumable(lctx, store, r, rep)
			if err != nil {
				return fmt.Errorf("check %s: %w", r.info().Rule, err)
			}
			rep.OutOfLine += res.OutOfLine
			rep.Rules = append(rep.Rules, res)
		}
		return store.ForgetCheck(lctx)
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// checkRuleResumable checks r from its stored progress, adding its
// findings to rep, and returns its row.
func (c *Checker) checkRuleResumable(ctx context.Context, store *state.Store, r rule, rep *Report) (RuleResult, error) {
	res := r.info()
	p, err := store.CheckProgressOf(ctx, res.Rule)
	if err != nil {
		return res, err
	}
	if p.LastID == nil && !p.Done || res.Kind == KindCounter && !p.Done {
		p = state.CheckProgress{ID: state.CheckKey(res.Rule), Rule: res.Rule}
	}
	mine, err := decodeFindings(p.Findings)
	if err != nil {
		return res, fmt.Errorf("read the stored findings: %w", err)
	}
	rep.Findings = append(rep.Findings, mine...)
	rep.Truncated = rep.Truncated || p.Truncated
	res.OutOfLine = p.OutOfLine
	if p.Done {
		res.Checked, res.Method = p.Checked, p.Method
		return res, nil
	}
	from, filter := p.LastID, bson.D{}
	if from != nil {
		filter = after(from)
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var prev bson.RawValue
	saved := time.Now()
	var failed error
	save := func(last any) error {
		stored, err := encodeFindings(mine)
		if err != nil {
			return err
		}
		p.LastID, p.OutOfLine, p.Findings = last, res.OutOfLine, stored
		return store.SaveCheckProgress(ctx, &p)
	}
	checked, method, err := r.scan(sctx, c, filter, func(f Finding) {
		if failed != nil {
			return
		}
		if prev.Type != 0 && key(prev) != key(f.id) && res.Kind != KindCounter && time.Since(saved) >= saveEvery {
			if failed = save(prev); failed != nil {
				cancel(failed)
				return
			}
			saved = time.Now()
		}
		prev = f.id
		if h := c.hook(); h != nil {
			h("integrity.check "+f.Collection, res.OutOfLine, 0)
		}
		res.OutOfLine++
		if c.opts.MaxFindings < 0 || len(rep.Findings) < c.opts.MaxFindings {
			rep.Findings = append(rep.Findings, f)
			mine = append(mine, f)
		} else {
			rep.Truncated, p.Truncated = true, true
		}
	})
	if failed != nil {
		return res, failed
	}
	if err != nil {
		return res, err
	}
	if from != nil {
		// The documents up to the stored _id were read by the stopped check.
		before, err := c.db.Collection(res.Collection).CountDocuments(ctx, bson.D{{Key: "$nor", Value: bson.A{after(from)}}})
		if err != nil {
			return res, err
		}
		checked += before
	}
	res.Checked, res.Method = checked, method
	p.Checked, p.Method, p.Done = checked, method, true
	return res, save(p.LastID)
}

func encodeFindings(fs []Finding) ([]bson.Raw, error) {
	out := make([]bson.Raw, 0, len(fs))
	for _, f := range fs {
		b, err := bson.Marshal(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func decodeFindings(raws []bson.Raw) ([]Finding, error) {
	out := make([]Finding, 0, len(raws))
	for _, b := range raws {
		var f Finding
		if err := bson.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
