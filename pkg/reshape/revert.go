package reshape

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// Revert undoes m's run-once operations, last first, for `down` (under
// the migration lock ctx carries, every write fenced), then forgets their
// progress so a later `up` runs them again:
//
//   - extract: the children go back into their parent's array (see
//     [Options] and the package doc's rules 8-10), then the ones embedded
//     are deleted;
//   - renameCollection: renamed back;
//   - copyCollection: the copy is dropped (its source is untouched);
//   - dropCollection: nothing can bring the collection back: the result
//     says so (Unrestorable), and the rest is reverted;
//   - embed: the copied fields are removed (a snapshot's values as copied
//     cannot come back: the result says so);
//   - go: its down function runs, or the result says there is none.
//
// Each revert is resumable: its own progress is kept beside the
// operation's, and one interrupted resumes where it stopped.
func Revert(ctx context.Context, db *mongo.Database, m *migration.Migration, opts Options) ([]OpResult, error) {
	opts.defaults()
	if len(m.Run) == 0 {
		return nil, nil
	}
	if err := missingRunFunc(m, opts.Registry, true); err != nil {
		return nil, err
	}
	info, err := probe.Server(ctx, db)
	if err != nil {
		return nil, err
	}
	st := state.New(db)
	var out []OpResult
	for i := len(m.Run) - 1; i >= 0; i-- {
		op := m.Run[i]
		up, err := st.RunProgressOf(ctx, m.Version, i, string(op.Kind))
		if err != nil {
			return out, err
		}
		p, err := st.RunDownProgressOf(ctx, m.Version, i, string(op.Kind))
		if err != nil {
			return out, err
		}
		o := &operation{db: db, st: st, m: m, op: op, p: &p, opts: opts, ferretDB: info.FerretDBVersion != "", arrays: version.ArraysFor(info.FerretDBVersion), start: time.Now()}
		r := OpResult{Index: i, Kind: op.Kind}
		if p.Done {
			r.Skipped, r.Documents, r.Summary = true, p.Moved, "reverted by an earlier down"
		} else {
			if err := o.revert(ctx, up, &r); err != nil {
				return out, &OpError{File: m.File, Line: op.Pos.Line, Index: i, Kind: op.Kind, Err: fmt.Errorf("revert: %w", err)}
			}
			p.Done = true
			if err := st.SaveRunProgress(ctx, &p); err != nil {
				return out, err
			}
			r.Documents, r.Summary = p.Moved, o.summary
		}
		opts.Log.Log(events.RunOpDone{Version: m.Version, Index: i, Summary: r.Summary})
		out = append(out, r)
	}
	return out, st.ForgetRun(ctx, m.Version)
}

func (o *operation) revert(ctx context.Context, up state.RunProgress, r *OpResult) error {
	switch o.op.Kind {
	case migration.RunRename:
		return o.renameBack(ctx)
	case migration.RunCopy:
		return o.dropCopy(ctx)
	case migration.RunDrop:
		what := fmt.Sprintf("dropped %s", o.op.Name)
		if up.Moved > 0 {
			what += fmt.Sprintf(" with %d documents (allowNonEmpty)", up.Moved)
		}
		r.Unrestorable = fmt.Sprintf("%s:%d: %04d %s (run operation %d); down cannot restore it", migration.DisplayName(o.m.File), o.op.Pos.Line, o.m.Version, what, o.p.Index+1)
		o.summary = "cannot restore " + o.op.Name + ": " + what
		return nil
	case migration.RunExtract:
		return o.reembed(ctx)
	case migration.RunEmbed:
		return o.unembed(ctx, r)
	case migration.RunGo:
		return o.goRevert(ctx, r)
	}
	return fmt.Errorf("unknown run operation %q", o.op.Kind)
}

// renameBack renames To back to From; like rename, its progress is saved
// as started before the command, so a resumed down that finds To gone and
// From there takes it as done.
func (o *operation) renameBack(ctx context.Context) error {
	from, to := o.op.To, o.op.From
	ex, err := o.exists(ctx, from, to)
	if err != nil {
		return err
	}
	switch {
	case !ex[from] && ex[to] && o.p.Pass > 0:
		o.summary = fmt.Sprintf("renamed %s back to %s", from, to)
		return nil
	case !ex[from]:
		return fmt.Errorf("collection %s does not exist, nothing to rename back to %s", from, to)
	case ex[to]:
		return fmt.Errorf("collection %s exists again; renaming %s back would overwrite it: rename or drop it first, then run down again", to, from)
	}
	if err := o.sendRename(ctx, from, to); err != nil {
		return err
	}
	o.summary = fmt.Sprintf("renamed %s back to %s", from, to)
	return nil
}

// dropCopy drops the copy copyCollection made (whatever it holds now).
func (o *operation) dropCopy(ctx context.Context) error {
	name := o.op.To
	ex, err := o.exists(ctx, name)
	if err != nil {
		return err
	}
	if !ex[name] {
		o.summary = fmt.Sprintf("the copy %s is gone already; %s is untouched", name, o.op.From)
		return nil
	}
	n, err := o.db.Collection(name).CountDocuments(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	if err := o.db.Collection(name).Drop(ctx); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	o.p.Moved = n
	o.summary = fmt.Sprintf("dropped %s, the copy of %s (%d documents); %s is untouched", name, o.op.From, n, o.op.From)
	return nil
}
