package lifecycleplan

// MongoDB 9.0's validationLevel constraint (internal/lifecycle,
// constraint.go, states the server's rules with their sources): the
// commands that lower a collection the server holds at constraint before
// its validator changes, and that raise it once its validator window
// closed, with the reading they are decided on. The runner sends them.

import (
	"context"
	"fmt"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// WithLowering puts, before the first command of cmds that sends a
// validator to a collection the server holds at constraint (or prepared
// for it), the collMod that lowers it to strict: the server refuses the
// validator change otherwise. Only collections some migration declares
// constraint for are looked up (mongomig raises no other), so a directory
// without constraint reads nothing more. lowered (may be nil) are the
// collections an earlier step of the same plan lowers already; it gains
// those lowered here.
func (p *Planner) WithLowering(ctx context.Context, cmds []cmddoc.Command, lowered map[string]bool) ([]cmddoc.Command, error) {
	var srv map[string]ServerColl
	var out []cmddoc.Command
	for _, c := range cmds {
		if v, ok := cmddoc.SentValidator(c); ok && v != nil && c.Name == "collMod" && !lowered[c.Collection] && declaresConstraint(p.Migrations, c.Collection) {
			if srv == nil {
				var err error
				if srv, err = p.ServerCollections(ctx); err != nil {
					return nil, err
				}
			}
			if lifecycle.HeldAtConstraint(srv[c.Collection].Options) {
				out = append(out, cmddoc.CollMod(c.Collection, lifecycle.LowerFields()))
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
func declaresConstraint(ms []*migration.Migration, coll string) bool {
	for _, m := range ms {
		if c := m.Collection(coll); c != nil && c.ValidationLevel == migration.LevelConstraint {
			return true
		}
	}
	return false
}

// RaiseCandidates are the collections up raises to constraint now: the
// files declare constraint as of migration top, the server has it, the
// window is closed (closing: or closes in this run; tightened: a
// backfill's checkpoint records it closed), and the server holds a
// validator at strict for it (not client-side, not at constraint yet).
// docVersionAt is the version coll's documents carry as of top (0: none).
func (p *Planner) RaiseCandidates(ctx context.Context, top int64, closing map[string]bool, docVersionAt func(coll string, at int64) int64, tightened func(ctx context.Context, coll string) (bool, error)) ([]string, error) {
	var names []string
	for _, name := range bsonx.CollectionsWithValidators(p.Migrations) {
		if lifecycle.ConstraintAt(p.Migrations, name, top) && docVersionAt(name, top) > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	vs, err := p.Settings(ctx)
	if err != nil || !vs.Constraint.Available {
		return nil, err
	}
	srv, err := p.ServerCollections(ctx)
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
			closed, err := tightened(ctx, name)
			if err != nil {
				return nil, err
			}
			if !closed {
				continue
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// PlanRaise is what up would send after tightening (the dry run): the
// collMods raising RaiseCandidates to constraint, tighten being the
// collMods closing windows in this run.
func (p *Planner) PlanRaise(ctx context.Context, top int64, tighten []cmddoc.Command, docVersionAt func(coll string, at int64) int64, tightened func(ctx context.Context, coll string) (bool, error)) ([]cmddoc.Command, error) {
	closing := map[string]bool{}
	for _, c := range tighten {
		closing[c.Collection] = true
	}
	names, err := p.RaiseCandidates(ctx, top, closing, docVersionAt, tightened)
	var cmds []cmddoc.Command
	for _, n := range names {
		cmds = append(cmds, RaiseCommands(n)...)
	}
	return cmds, err
}

// RaiseCommands are the two collMods that raise coll to constraint, in
// the order the server requires.
func RaiseCommands(coll string) []cmddoc.Command {
	prep := cmddoc.CollMod(coll, lifecycle.PrepareFields())
	raise := cmddoc.CollMod(coll, lifecycle.RaiseFields())
	prep.Tighten, raise.Tighten = true, true
	return []cmddoc.Command{prep, raise}
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
