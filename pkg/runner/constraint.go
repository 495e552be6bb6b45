package runner

// MongoDB 9.0's validationLevel constraint (internal/lifecycle,
// constraint.go, states the server's rules with their sources): a
// collection that declares it is sent strict with every validator; when
// its validator window closes (window.go) and the server holds the plain
// schema at strict, up raises it (collMod prepareConstraintValidationLevel
// true, then collMod validationLevel constraint; the server scans the
// collection once more before it sets the level); a later validator change
// (up of a later migration, down) lowers it first (collMod validationLevel
// strict, prepareConstraintValidationLevel false).

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/pkg/probe"
)

// WithValidationSettings gives the runner the server's validation
// settings (the result of [probe.ProbeValidationSettings]) instead of
// probing them the first time a file declares errorAndLog or constraint.
func WithValidationSettings(vs *probe.ValidationSettings) Option {
	return optionFunc(func(c *config) error {
		c.validation = vs
		return nil
	})
}

// validationSettings are the server's validation settings: given by
// [WithValidationSettings], else probed once (in a scratch database).
func (r *Runner) validationSettings(ctx context.Context) (*probe.ValidationSettings, error) {
	return r.validation.get(func() (*probe.ValidationSettings, error) {
		vs, err := probe.ProbeValidationSettings(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("probe the server's validation settings: %w", err)
		}
		return vs, nil
	})
}

// withLowering lowers, before cmds change their validators, the
// collections the server holds at constraint (lifecycleplan's WithLowering).
func (r *Runner) withLowering(ctx context.Context, cmds []Command, lowered map[string]bool) ([]Command, error) {
	return r.planner().WithLowering(ctx, cmds, lowered)
}

// planRaise is what up would send after tightening: tighten are the
// collMods closing windows in this run (lifecycleplan's PlanRaise).
func (r *Runner) planRaise(ctx context.Context, top int64, tighten []Command) ([]Command, error) {
	return r.planner().PlanRaise(ctx, top, tighten, r.window.DocVersionAt, r.windows().Tightened)
}

// ConstraintError is up failing to raise a collection to constraint after
// its window closed: the collection stays strict, with the plain schema in
// force.
type ConstraintError = lifecycleplan.ConstraintError

// raiseConstraints raises, after the windows of this run closed, the
// collections that declare constraint (lifecycleplan's RaiseCandidates). When the
// server refuses the level it clears the prepare flag again (so a later
// validator change is not refused) and returns a [*ConstraintError].
func (r *Runner) raiseConstraints(ctx context.Context, top int64) ([]CommandResult, error) {
	names, err := r.planner().RaiseCandidates(ctx, top, nil, r.window.DocVersionAt, r.windows().Tightened)
	if err != nil {
		return nil, err
	}
	var results []CommandResult
	for _, name := range names {
		res, _, err := r.runAll(ctx, 0, "validator window", "up", lifecycleplan.RaiseCommands(name))
		results = append(results, res...)
		if err != nil {
			if len(res) > 0 { // prepared, not raised: clear the flag
				undo, _, uerr := r.runAll(finishing(ctx), 0, "validator window", "up", []Command{collModCommand(name, lifecycle.LowerFields())})
				results = append(results, undo...)
				err = errors.Join(err, uerr)
			}
			return results, &ConstraintError{Collection: name, Err: err}
		}
	}
	return results, nil
}
