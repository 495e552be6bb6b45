package integrity

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// fix is the guarded write that puts one finding in line.
type fix struct {
	coll   string
	id     bson.RawValue
	filter bson.D // _id and the stale value seen
	update bson.D // nil with del
	del    bool
	upsert bool
	// precheck, when set, must say yes right before the write (a dangling
	// reference's document is still missing).
	precheck func(ctx context.Context, c *Checker) (bool, error)
	// rescan re-checks the document when the guard no longer matches.
	rescan       rule
	wrong, right bsonx.ExtJSON
	// source, for a copy's fix: the source value written, read again
	// after the write (sources.go).
	source *copySource
}

// Outcomes of a fix.
const (
	OutcomeFixed      = "fixed"
	OutcomeWouldFix   = "would fix"
	OutcomeInLine     = "in line now" // a concurrent write put it in line
	OutcomeSnapshot   = "not repaired: a snapshot is never rewritten"
	OutcomeReported   = "not repaired: onDangling is report"
	OutcomeConflict   = "not repaired: the document kept changing"
	OutcomeReferenced = "not repaired: the referenced document exists now"
)

// Fix is one finding repair handled: {rule, _id, wrong, right} and what
// happened.
type Fix struct {
	Rule       string        `json:"rule"`
	Collection string        `json:"collection"`
	ID         bsonx.ExtJSON `json:"_id"`
	Path       string        `json:"path"`
	Wrong      bsonx.ExtJSON `json:"wrong,omitempty"`
	Right      bsonx.ExtJSON `json:"right,omitempty"`
	Outcome    string        `json:"outcome"`
}

// RepairReport is the result of [Checker.Repair].
type RepairReport struct {
	Database string `json:"database"`
	DryRun   bool   `json:"dryRun"`
	// Fixed counts the writes done (or, dry, that would be done).
	Fixed int64 `json:"fixed"`
	// Left counts the findings left out of line (snapshots, reported
	// references, conflicts).
	Left  int64 `json:"left"`
	Fixes []Fix `json:"fixes"`
	// Resumed: the repair went on from the progress a stopped one stored.
	Resumed bool `json:"resumed,omitempty"`
	// Truncated: more fixes than Options.MaxFindings were made (or left);
	// the counts are complete.
	Truncated bool `json:"truncated,omitempty"`
}

// maxAttempts bounds the re-checks of one document a repair makes when
// its guard keeps missing (a document written to continuously).
const maxAttempts = 5

// Repair checks every rule and writes the fixes, each guarded on the
// value the check saw; dryRun writes nothing. It never writes a snapshot
// copy or a reference whose rule says report. It stores its progress per
// rule (internal/state) and, when stopped (a crash, a cancelled context),
// the next Repair goes on from there; one that finished every rule
// forgets it. With Options.Leases it holds [RepairLease] throughout (a
// nil report: the lease was not acquired).
func (c *Checker) Repair(ctx context.Context, dryRun bool) (*RepairReport, error) {
	if err := c.refuseMissing(ctx); err != nil {
		return nil, err
	}
	rep := &RepairReport{Database: c.db.Name(), DryRun: dryRun, Fixes: []Fix{}}
	t := &tally{rep: rep, max: c.opts.MaxFindings}
	if dryRun || c.opts.Leases == nil {
		return rep, c.repairRules(ctx, t, dryRun)
	}
	notRun, err := c.repairRanged(ctx, t)
	if notRun {
		return nil, err // the lease was not acquired: nothing ran
	}
	return rep, err
}

func rightOf(f Finding) bsonx.ExtJSON {
	if f.fix != nil {
		return f.fix.right
	}
	return f.Expected
}

// repairOne applies f's fix; when its guard matches nothing, it re-checks
// the document and tries what it finds now. It returns the finding it
// acted on last (the re-checked one: its wrong and right values are what
// the write replaced and wrote).
func (c *Checker) repairOne(ctx context.Context, f Finding, dryRun bool) (Finding, string, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		fx := f.fix
		switch {
		case fx == nil && f.Problem == ProblemDangling:
			return f, OutcomeReported, nil
		case fx == nil:
			return f, OutcomeSnapshot, nil
		case dryRun:
			return f, OutcomeWouldFix, nil
		}
		if fx.precheck != nil {
			ok, err := fx.precheck(ctx, c)
			if err != nil {
				return f, "", err
			}
			if !ok {
				return f, OutcomeReferenced, nil
			}
		}
		if h := c.hook(); h != nil {
			h("integrity.write "+f.Collection, 0, attempt)
		}
		done, err := fx.apply(ctx, c)
		if err != nil {
			return f, OutcomeFixed, err
		}
		if done {
			moved, err := c.sourceMoved(ctx, fx)
			if err != nil || !moved {
				return f, OutcomeFixed, err
			}
		}
		now, err := c.recheck(ctx, f)
		if err != nil || now == nil {
			return f, OutcomeInLine, err
		}
		f = *now
	}
	return f, OutcomeConflict, nil
}

// apply sends the guarded write; false when the guard matched nothing.
func (fx *fix) apply(ctx context.Context, c *Checker) (bool, error) {
	coll := c.db.Collection(fx.coll)
	filter, err := c.exactFilter(ctx, fx.filter)
	if err != nil {
		return false, err
	}
	if fx.del {
		res, err := coll.DeleteOne(ctx, filter)
		return err == nil && res.DeletedCount == 1, err
	}
	res, err := coll.UpdateOne(ctx, filter, fx.update, options.UpdateOne().SetUpsert(fx.upsert))
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1 || res.UpsertedCount == 1, nil
}

// recheck re-reads f's document for f's rule: the finding at the same
// path (and, for a reference, the same value), or nil when it is in line.
func (c *Checker) recheck(ctx context.Context, f Finding) (*Finding, error) {
	var now *Finding
	_, _, err := f.fix.rescan.scan(ctx, c, bson.D{{Key: "_id", Value: f.id}}, func(g Finding) {
		if now == nil && g.Path == f.Path && (g.Problem != ProblemDangling || g.Stored == f.Stored) {
			now = &g
		}
	})
	return now, err
}
