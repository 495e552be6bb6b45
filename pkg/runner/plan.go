package runner

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// PlannedMigration is a migration a run would apply or revert, with the
// exact commands it would send.
type PlannedMigration struct {
	Version  int64     `json:"version"`
	Name     string    `json:"name"`
	File     string    `json:"file"`
	Commands []Command `json:"commands"`
	// Run is what the migration's run-once operations would touch.
	Run []reshape.Planned `json:"run,omitempty"`
}

// Plan is what Up (or Down) would do, computed without changing anything.
type Plan struct {
	Direction  Direction          `json:"direction"`
	Current    int64              `json:"current"`
	Target     int64              `json:"target"`
	Migrations []PlannedMigration `json:"migrations"`
	// Tighten are the commands that close validator windows a backfill
	// proved unnecessary (only when nothing is pending).
	Tighten []Command `json:"tighten,omitempty"`
	// HeldWindows are windows that could close and stay open while older
	// releases run (releases.go).
	HeldWindows []HeldWindow `json:"heldWindows,omitempty"`
	// Notes are things the reader should know (the server will refuse
	// validators, say).
	Notes []string `json:"notes,omitempty"`
	// Reassert is what up puts back first, where the server differs from
	// the applied migrations (nil: nothing).
	Reassert *Reassertion `json:"reassert,omitempty"`
	// Settings are the effective validationLevel and validationAction of
	// each collection whose validator a planned migration sends.
	Settings []EffectiveSettings `json:"settings,omitempty"`
}

// Plan returns what UpTo(ctx, to) would apply ([Latest]: everything pending)
// and the commands it would send. It reads the ledger, the collection
// names and buildInfo; it takes no lock and writes nothing to the
// database. When a command sends a validator it probes, in a scratch
// database it drops, which $jsonSchema keywords the server enforces, and
// refuses validators that use others with an [*UnenforceableError], as Up
// does. Drift and out-of-order files are errors here as in Up.
func (r *Runner) Plan(ctx context.Context, to int64) (*Plan, error) {
	pending, err := r.pending(ctx, to)
	if err != nil {
		return nil, err
	}
	if err := r.planner().RefuseSettings(ctx, pending); err != nil { // validation81.go
		return nil, err
	}
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	exists, err := r.existing(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{Direction: "up", Current: st.Current, Target: st.Current, Migrations: []PlannedMigration{}}
	if p.Reassert, err = r.planReassert(ctx); err != nil {
		return nil, err
	}
	lowered := map[string]bool{}
	planner := r.planner()
	planner.Simulated = &lifecycleplan.Simulated{} // each migration planned over what those before it leave
	for _, m := range pending {
		cmds, err := planner.Commands(ctx, m, exists, func(coll string) (bson.D, error) {
			v, open, err := r.windows().For(ctx, coll, m.Version)
			if open {
				p.Notes = append(p.Notes, r.uncheckedNotes(m, coll)...)
			}
			return v, err
		})
		if err != nil {
			return nil, err
		}
		if cmds, err = r.withLowering(ctx, cmds, lowered); err != nil { // constraint.go
			return nil, err
		}
		ops, err := reshape.PlanWith(ctx, r.db, m, r.registry)
		if err != nil {
			return nil, err
		}
		p.Migrations = append(p.Migrations, PlannedMigration{Version: m.Version, Name: m.Name, File: m.File, Commands: cmds, Run: ops})
		p.Target = m.Version
	}
	if len(pending) == 0 {
		if p.Tighten, err = r.windows().Tighten(ctx, maxApplied(st.applied)); err != nil {
			return nil, err
		}
		if p.Tighten, p.HeldWindows, err = r.holdTightening(ctx, maxApplied(st.applied), p.Tighten); err != nil {
			return nil, err
		}
		ex, exHeld, err := r.planExtractWindows(ctx, maxApplied(st.applied)) // window_extract.go
		if err != nil {
			return nil, err
		}
		p.Tighten, p.HeldWindows = append(p.Tighten, ex...), append(p.HeldWindows, exHeld...)
		raise, err := r.planRaise(ctx, maxApplied(st.applied), p.Tighten) // constraint.go
		if err != nil {
			return nil, err
		}
		p.Tighten = append(p.Tighten, raise...)
	}
	if err := r.checkLifecycle(ctx, p.Migrations); err != nil {
		return nil, err
	}
	if err := r.checkEnforceable(ctx, p.Migrations, p.Tighten); err != nil {
		return nil, err
	}
	if err := r.clientSideNotes(ctx, p); err != nil {
		return nil, err
	}
	r.serverNotes(ctx, p, pending)
	if err := r.planSettings(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// uncheckedNotes say which document versions the window m sends for coll
// lets pass unchecked (no migration declares a schema for them: the v0
// branch when the collection's first validator comes with its first
// upgrade).
func (r *Runner) uncheckedNotes(m *migration.Migration, coll string) []string {
	var notes []string
	for _, b := range r.window.Branches(coll, m.Version) {
		if b.Validator == nil {
			notes = append(notes, fmt.Sprintf("%s: %s: the validator window lets documents at version %d pass unchecked: no migration declares a schema for that version (status shows it as v%d: unchecked while the window is open)",
				m.File, coll, b.Version, b.Version))
		}
	}
	return notes
}

// PlanDown returns what DownTo(ctx, to) would revert.
func (r *Runner) PlanDown(ctx context.Context, to int64) (*Plan, error) {
	dp, err := r.checkDown(ctx, to)
	if err != nil {
		return nil, err
	}
	st, err := r.status(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{Direction: "down", Current: st.Current, Target: to, Migrations: []PlannedMigration{}}
	var ms []*migration.Migration
	lowered := map[string]bool{}
	for _, t := range dp.targets {
		m := t.M
		var cmds []Command
		for _, d := range t.Downs {
			if w := r.window.At(d.Coll, m.Version); w != nil {
				cmds = append(cmds, collModCommand(d.Coll, bson.D{{Key: "validator", Value: w}}))
			}
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %s: %d documents at version %d or above are downgraded to %d before the validators and indexes are reverted",
				m.File, d.Coll, d.Count, d.From, d.To))
		}
		cmds = append(cmds, t.Cmds...)
		if cmds, err = r.withLowering(ctx, cmds, lowered); err != nil { // constraint.go
			return nil, err
		}
		for _, d := range lostData(m) {
			p.Notes = append(p.Notes, lostNote(d))
		}
		p.Notes = append(p.Notes, runOnceNotes(m)...)
		p.Notes = append(p.Notes, t.Lost...)
		p.Migrations = append(p.Migrations, PlannedMigration{Version: m.Version, Name: m.Name, File: m.File, Commands: cmds})
		ms = append(ms, m)
	}
	// The validators down puts back are checked as up's (enforce.go).
	if err := r.checkEnforceable(ctx, p.Migrations, nil); err != nil {
		return nil, err
	}
	if err := r.clientSideNotes(ctx, p); err != nil {
		return nil, err
	}
	r.serverNotes(ctx, p, ms)
	return p, nil
}

// serverNotes warns when the server is known to refuse validators. It
// reads buildInfo only.
func (r *Runner) serverNotes(ctx context.Context, p *Plan, ms []*migration.Migration) {
	info, err := probe.Server(ctx, r.db)
	if err != nil || info.FerretDBVersion == "" {
		return
	}
	for _, m := range ms {
		for _, c := range m.Collections {
			if hasValidatorChange(c) {
				p.Notes = append(p.Notes, "the server is FerretDB, which refuses validators (create/collMod with validator answer NotImplemented): they will be applied without the validator and enforced client-side only")
				return
			}
		}
	}
}
