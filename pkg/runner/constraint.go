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

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/pkg/migration"
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
	if r.cfg.validation == nil {
		vs, err := probe.ProbeValidationSettings(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("probe the server's validation settings: %w", err)
		}
		r.cfg.validation = vs
	}
	return r.cfg.validation, nil
}

func downStrict(ms []*migration.Migration, m *migration.Migration, exists map[string]bool, window func(coll string, at int64) bson.D) ([]Command, []string) {
	cmds, unknown := cmddoc.Down(ms, m, exists, window)
	return lifecycleplan.StrictForConstraint(cmds), unknown
}

// withLowering puts, before the first command of cmds that sends a
// validator to a collection the server holds at constraint (or prepared
// for it), the collMod that lowers it to strict: the server refuses the
// validator change otherwise. Only collections some migration declares
// constraint for are looked up (mongomig raises no other), so a directory
// without constraint reads nothing more. lowered (may be nil) are the
// collections an earlier step of the same plan lowers already; it gains
// those lowered here.
func (r *Runner) withLowering(ctx context.Context, cmds []Command, lowered map[string]bool) ([]Command, error) {
	var srv map[string]serverColl
	var out []Command
	for _, c := range cmds {
		if v, ok := sentValidator(c); ok && v != nil && c.Name == "collMod" && !lowered[c.Collection] && r.declaresConstraint(c.Collection) {
			if srv == nil {
				var err error
				if srv, err = r.serverCollections(ctx); err != nil {
					return nil, err
				}
			}
			if lifecycle.HeldAtConstraint(srv[c.Collection].Options) {
				out = append(out, collModCommand(c.Collection, lifecycle.LowerFields()))
				if lowered != nil {
					lowered[c.Collection] = true
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// declaresConstraint reports whether some migration declares
// validationLevel constraint for coll.
func (r *Runner) declaresConstraint(coll string) bool {
	for _, m := range r.migrations {
		if c := m.Collection(coll); c != nil && c.ValidationLevel == migration.LevelConstraint {
			return true
		}
	}
	return false
}

// raiseCandidates are the collections up raises to constraint now: the
// files declare constraint as of migration top, the server has it, the
// window is closed (closing: or closes in this run), and the server holds
// a validator at strict for it (not client-side, not at constraint yet).
func (r *Runner) raiseCandidates(ctx context.Context, top int64, closing map[string]bool) ([]string, error) {
	var names []string
	for _, name := range bsonx.CollectionsWithValidators(r.migrations) {
		if lifecycle.ConstraintAt(r.migrations, name, top) && r.docVersionAt(name, top) > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	vs, err := r.validationSettings(ctx)
	if err != nil || !vs.Constraint.Available {
		return nil, err
	}
	srv, err := r.serverCollections(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		opts := srv[name].Options
		if opts == nil || lifecycle.AtConstraint(opts) || opts.Lookup("validator").Type == 0 {
			continue
		}
		if !closing[name] {
			cp, err := r.readCheckpoint(ctx, name)
			if err != nil {
				return nil, err
			}
			if cp == nil || !cp.Tightened {
				continue
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// raiseCommands are the two collMods that raise coll to constraint, in
// the order the server requires.
func raiseCommands(coll string) []Command {
	prep := collModCommand(coll, lifecycle.PrepareFields())
	raise := collModCommand(coll, lifecycle.RaiseFields())
	prep.Tighten, raise.Tighten = true, true
	return []Command{prep, raise}
}

// planRaise is what up would send after tightening: tighten are the
// collMods closing windows in this run.
func (r *Runner) planRaise(ctx context.Context, top int64, tighten []Command) ([]Command, error) {
	closing := map[string]bool{}
	for _, c := range tighten {
		closing[c.Collection] = true
	}
	names, err := r.raiseCandidates(ctx, top, closing)
	var cmds []Command
	for _, n := range names {
		cmds = append(cmds, raiseCommands(n)...)
	}
	return cmds, err
}

// ConstraintError is up failing to raise a collection to constraint after
// its window closed: the collection stays strict, with the plain schema in
// force.
type ConstraintError struct {
	Collection string
	Err        error
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("%s: the validator window is closed (the plain schema in force, validationLevel strict), but the server refused validationLevel constraint: %v; the collection stays strict and the next up tries again: fix what the server names (a document its validator refuses), or declare strict", e.Collection, e.Err)
}

func (e *ConstraintError) Unwrap() error { return e.Err }

// raiseConstraints raises, after the windows of this run closed, the
// collections that declare constraint (see raiseCandidates). When the
// server refuses the level it clears the prepare flag again (so a later
// validator change is not refused) and returns a [*ConstraintError].
func (r *Runner) raiseConstraints(ctx context.Context, top int64) ([]CommandResult, error) {
	names, err := r.raiseCandidates(ctx, top, nil)
	if err != nil {
		return nil, err
	}
	var results []CommandResult
	for _, name := range names {
		res, _, err := r.runAll(ctx, 0, "validator window", "up", raiseCommands(name))
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
