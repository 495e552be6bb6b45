package runner

import (
	"context"
	"math"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// Applied is one migration an Up or Down applied or reverted.
type Applied struct {
	Version    int64           `json:"version"`
	Name       string          `json:"name"`
	File       string          `json:"file"`
	Direction  Direction       `json:"direction"`
	DurationMS int64           `json:"durationMs"`
	Commands   []CommandResult `json:"commands"`
	// ClientSideValidators lists collections whose validator the server
	// refused (enforced client-side only).
	ClientSideValidators []string `json:"clientSideValidators,omitempty"`
	// Documents lists data downgrades (Down only).
	Documents []DocumentChange `json:"documents,omitempty"`
	// Unrestorable lists the reverted upgrade's steps that discarded
	// stored data down cannot bring back (Down only; discards.go).
	Unrestorable []migration.Discard `json:"unrestorable,omitempty"`
	// NotReverted says, a sentence each, what of the reverted migration's
	// lifecycle part cannot come back (Down only; down_lifecycle.go).
	NotReverted []string `json:"notReverted,omitempty"`
	// Run is what the migration's run-once operations did (Up), or what
	// reverting them did (Down).
	Run []reshape.OpResult `json:"run,omitempty"`
}

// UpResult is what an [Runner.Up] or [Runner.UpTo] did: the migrations it
// applied, in order, and the validator windows it closed (nil: none).
// On an error it holds what was done before it.
type UpResult struct {
	Applied   []Applied   `json:"applied"`
	Tightened *Tightening `json:"tightened,omitempty"`
	// Reasserted is what up put back first where the server differed
	// from the applied migrations (reassert_up.go).
	Reasserted *Reasserted `json:"reasserted,omitempty"`
	// Buckets is what up did to the time-bucketed families (nil: none declared; buckets.go).
	Buckets *BucketRun `json:"buckets,omitempty"`
}

// Tightening is up closing validator windows that a backfill proved
// unnecessary: the collMods it sent (each with its outcome) and the
// collections whose validator stays client-side only. It applies no
// migration.
type Tightening struct {
	Commands             []CommandResult `json:"commands"`
	ClientSideValidators []string        `json:"clientSideValidators,omitempty"`
	// Held are the windows left open while older releases run (releases.go).
	Held []HeldWindow `json:"held,omitempty"`
}

// The ledger against the files: an edited or removed applied file, a
// pending file numbered below an applied one (internal/statusview).
type (
	DriftError = statusview.DriftError
	OrderError = statusview.OrderError
)

// Latest, given as the target version to [Runner.UpTo], [Runner.Plan] and
// [Runner.DryRunReport], means every pending migration. (0 means version 0:
// nothing to apply.)
const Latest int64 = math.MaxInt64

// Up applies every pending migration.
func (r *Runner) Up(ctx context.Context) (*UpResult, error) { return r.UpTo(ctx, Latest) }

// UpTo applies pending migrations up to and including version to
// ([Latest]: all; 0: none).
// It takes the lock, refuses drift (unless allowed) and out-of-order
// files, applies each migration and records it in the ledger only after
// all of its commands succeeded. Nothing pending is not an error.
//
// Cancelling ctx stops it at the next safe point, between two commands,
// with an [*InterruptedError]; a command already sent runs to its end.
func (r *Runner) UpTo(ctx context.Context, to int64) (*UpResult, error) {
	res := &UpResult{Applied: []Applied{}}
	// Before the lock is taken: a validator the server cannot enforce
	// stops the run before anything is written (enforce.go).
	if err := r.preflight(ctx, to); err != nil {
		return res, err
	}
	total := 0
	err := r.withLock(withCommand(ctx, "up"), lockID, func(ctx context.Context) error {
		if err := r.reassertAfterTakeover(ctx); err != nil {
			return err
		}
		pending, err := r.pending(ctx, to)
		if err != nil {
			return err
		}
		// Once applied, the application's lazy upgrades and the backfill
		// would discard what the file does not account for (docs/backfill.md,
		// Data a step discards): refused before anything is applied.
		if rep := lint.Discarding(r.migrations, pending); !rep.OK() {
			return &InvalidFilesError{Report: rep}
		}
		for _, m := range pending { // a `go:` operation this binary lacks
			if err := reshape.CheckRunFuncs(m, r.registry, false); err != nil {
				return err
			}
		}
		if err := r.acceptDrift(ctx); err != nil {
			return err
		}
		if res.Reasserted, err = r.reassertDiffering(ctx); err != nil {
			return err
		}
		total = len(pending)
		exists, err := r.existing(ctx)
		if err != nil {
			return err
		}
		for _, m := range pending {
			a, err := r.applyUp(ctx, m, exists)
			if err != nil {
				return err
			}
			res.Applied = append(res.Applied, a)
		}
		t, err := r.tighten(ctx)
		if err != nil {
			return err
		}
		res.Tightened = t
		b, err := r.bucketsUnderLock(ctx, time.Time{})
		res.Buckets = b
		return err
	})
	err = r.afterLateSend(ctx, "up", err)
	return res, interrupted(ctx, err, "up", res.Applied, total)
}

// tighten closes the validator windows a backfill proved unnecessary.
func (r *Runner) tighten(ctx context.Context) (*Tightening, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return nil, err
	}
	cmds, err := r.windows().Tighten(ctx, maxApplied(ledger))
	if err != nil {
		return nil, err
	}
	cmds, held, err := r.holdTightening(ctx, maxApplied(ledger), cmds)
	if err != nil {
		return nil, err
	}
	for _, h := range held {
		r.cfg.log.Log(events.WindowHeld{Collection: h.Collection, Message: h.Message})
	}
	results, clientSide, err := r.runAll(ctx, 0, "validator window", "up", cmds)
	if err != nil {
		return nil, err
	}
	reopened, moreClient, err := r.closeWindows(ctx, maxApplied(ledger), cmds)
	if err != nil {
		return nil, err
	}
	results = append(results, reopened...)
	ex, err := r.closeExtractWindows(ctx, maxApplied(ledger)) // window_extract.go
	results, clientSide, held = append(results, ex.results...), append(clientSide, ex.clientSide...), append(held, ex.held...)
	if err != nil {
		return nil, err
	}
	raised, err := r.raiseConstraints(ctx, maxApplied(ledger)) // constraint.go
	results = append(results, raised...)
	if len(results) == 0 && len(held) == 0 {
		return nil, err
	}
	if results == nil {
		results = []CommandResult{}
	}
	return &Tightening{Commands: results, ClientSideValidators: uniqueStrings(append(clientSide, moreClient...)), Held: held}, err
}

func (r *Runner) migrationByVersion(v int64) *migration.Migration {
	for _, m := range r.migrations {
		if m.Version == v {
			return m
		}
	}
	return nil
}

// pending checks the ledger against the files and returns what Up would
// apply, in order.
func (r *Runner) pending(ctx context.Context, to int64) ([]*migration.Migration, error) {
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	if err := statusview.Drift(st.Migrations, r.cfg.allowDrift, false); err != nil {
		return nil, err
	}
	var out []*migration.Migration
	for _, m := range r.migrations {
		if _, done := st.applied[m.Version]; done || m.Version > to {
			continue
		}
		if st.Current > m.Version {
			return nil, &OrderError{Pending: m.Version, Applied: st.Current, File: m.File}
		}
		out = append(out, m)
	}
	// A pending migration that declares nothing is refused before anything
	// is applied, as New refuses other lint errors.
	if empty := lint.Pending(out); !empty.OK() {
		return nil, &InvalidFilesError{Report: empty}
	}
	return out, nil
}

func (r *Runner) applyUp(ctx context.Context, m *migration.Migration, exists map[string]bool) (Applied, error) {
	start := time.Now()
	r.cfg.log.Log(events.MigrationStarted{Version: m.Version, File: m.File, Direction: "up"})
	var opened []string
	cmds, err := r.migrationCommands(ctx, m, exists, func(coll string) (bson.D, error) {
		v, open, err := r.windows().For(ctx, coll, m.Version)
		if open {
			opened = append(opened, coll)
		}
		return v, err
	})
	if err != nil {
		return Applied{}, err
	}
	if cmds, err = r.withLowering(ctx, cmds, nil); err != nil { // constraint.go
		return Applied{}, err
	}
	if err := r.checkLifecycle(ctx, []PlannedMigration{{Version: m.Version, File: m.File, Commands: cmds}}); err != nil {
		return Applied{}, err
	}
	results, clientSide, err := r.runAll(ctx, m.Version, m.File, "up", cmds)
	if err != nil {
		return Applied{}, err
	}
	for _, coll := range opened {
		if err := r.state.Reopen(finishing(ctx), coll); err != nil {
			return Applied{}, err
		}
	}
	ran, err := r.runOnce(ctx, m, exists)
	if err != nil {
		return Applied{}, err
	}
	sort.Strings(clientSide)
	took := time.Since(start)
	if err := r.record(finishing(ctx), m, took, clientSide); err != nil {
		return Applied{}, err
	}
	if r.hook != nil {
		r.hook("recorded", m.Version, 0)
	}
	r.cfg.log.Log(events.MigrationDone{Version: m.Version, File: m.File, Direction: "up", Took: took})
	return Applied{Version: m.Version, Name: m.Name, File: m.File, Direction: "up", DurationMS: took.Milliseconds(),
		Commands: results, ClientSideValidators: clientSide, Run: ran}, nil
}
