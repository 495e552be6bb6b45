package runner

// The extract window (internal/window, invariants 5 to 7): while an
// extract's migration declares a validator for the parent, the parent's
// validator also accepts the schema in force before that migration, until
// the extract is done, a fresh proof finds no parent holding the array,
// and no older release is live. This file opens it (every validator sent
// for the parent goes through withExtracts), closes it in up's tighten,
// and says why it stays open. Its flag is the operation's run-once
// progress (internal/state); down forgets that, which reopens it.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
)

// openExtracts are the extract windows of coll as of migration at that
// were not closed.
func (r *Runner) openExtracts(ctx context.Context, coll string, at int64) ([]window.Extract, error) {
	return r.window.OpenExtracts(coll, at, func(x window.Extract) (bool, error) {
		return r.state.RunWindowClosed(ctx, x.Version, x.Index)
	})
}

// withExtracts is v, the validator of coll as of migration at, with
// coll's open extract windows held open ([window.Set.WithExtracts]).
func (r *Runner) withExtracts(ctx context.Context, coll string, at int64, v bson.D) (bson.D, error) {
	if len(r.window.Extracts(coll, at)) == 0 {
		return v, nil
	}
	open, err := r.openExtracts(ctx, coll, at)
	if err != nil {
		return nil, err
	}
	return r.window.WithExtracts(v, coll, open), nil
}

// versionValidator is what the version window gives coll once migration
// top is applied, without the extract windows: its plain schema once
// closed, else the window (internal/declared reads it the same way).
func (r *Runner) versionValidator(ctx context.Context, coll string, top int64) (bson.D, error) {
	cv := r.docVersionAt(coll, top)
	if cv == 0 {
		return r.windowAt(coll, top), nil
	}
	cp, err := r.readCheckpoint(ctx, coll)
	if err != nil {
		return nil, err
	}
	if cp != nil && cp.Tightened && cp.Target == cv {
		return r.plainAt(coll, top), nil
	}
	return r.windowAt(coll, top), nil
}

// extractSources are the parents of the extracts of the migrations up to
// top, in name order.
func (r *Runner) extractSources(top int64) []string {
	seen := map[string]bool{}
	for _, m := range r.migrations {
		for _, op := range m.Run {
			if m.Version <= top && op.Kind == migration.RunExtract {
				seen[op.Extract.From] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// extractClose is tighten's part for the extract windows: the commands
// it sent and the windows it left open, with why.
type extractClose struct {
	results    []CommandResult
	clientSide []string
	held       []HeldWindow
}

// extractClosing is one parent whose extract windows closing may close
// (staying stay open), and the collMod that closes them.
type extractClosing struct {
	coll             string
	top              int64
	closing, staying []window.Extract
	inner            bson.D // the version window's part (versionValidator)
	cmd              Command
}

// extractDecisions decides, for each extract window of the migrations up
// to top, whether it may close now (invariant 6), and says why each
// other one stays open. It sends nothing (the dry run shows it).
func (r *Runner) extractDecisions(ctx context.Context, top int64) ([]extractClosing, []HeldWindow, error) {
	var live []release.Release
	if !r.cfg.allowOldReleases && len(r.extractSources(top)) > 0 {
		var err error
		if live, err = r.LiveReleases(ctx); err != nil {
			return nil, nil, err
		}
	}
	var out []extractClosing
	var held []HeldWindow
	for _, coll := range r.extractSources(top) {
		open, err := r.openExtracts(ctx, coll, top)
		if err != nil {
			return nil, nil, err
		}
		c := extractClosing{coll: coll, top: top}
		for _, x := range open {
			h, err := r.extractHeld(ctx, x, live)
			if err != nil {
				return nil, nil, err
			}
			if h != nil {
				held = append(held, *h)
				c.staying = append(c.staying, x)
			} else {
				c.closing = append(c.closing, x)
			}
		}
		if len(c.closing) == 0 {
			continue
		}
		if c.inner, err = r.versionValidator(ctx, coll, top); err != nil {
			return nil, nil, err
		}
		if v := r.window.WithExtracts(c.inner, coll, c.staying); v != nil {
			c.cmd = collModCommand(coll, bson.D{{Key: "validator", Value: v}})
			c.cmd.Tighten = true
		}
		out = append(out, c)
	}
	return out, held, nil
}

// planExtractWindows are the collMods up would send to close extract
// windows and the windows it would leave open (the dry run).
func (r *Runner) planExtractWindows(ctx context.Context, top int64) ([]Command, []HeldWindow, error) {
	ds, held, err := r.extractDecisions(ctx, top)
	var cmds []Command
	for _, d := range ds {
		if d.cmd.Collection != "" {
			cmds = append(cmds, d.cmd)
		}
	}
	return cmds, held, err
}

// closeExtractWindows closes, under the lock ctx carries, each extract
// window of the migrations up to top that may close, and says why each
// other one stays open.
func (r *Runner) closeExtractWindows(ctx context.Context, top int64) (extractClose, error) {
	var out extractClose
	ds, held, err := r.extractDecisions(ctx, top)
	out.held = held
	if err != nil {
		return out, err
	}
	for _, d := range ds {
		if err := r.closeExtracts(ctx, d, &out); err != nil {
			return out, err
		}
	}
	for _, h := range out.held {
		r.cfg.log.Log(events.WindowHeld{Collection: h.Collection, Message: h.Message})
	}
	return out, nil
}

// closeExtracts sends d's collMod, then proves again (an old release's
// write in between was accepted): a parent found then sends the window
// again and is reported held; the others are recorded closed.
func (r *Runner) closeExtracts(ctx context.Context, d extractClosing, out *extractClose) error {
	send := func(cmd Command) error {
		if cmd.Collection == "" {
			return nil
		}
		res, cs, err := r.runAll(ctx, 0, "validator window", "up", []Command{cmd})
		out.results, out.clientSide = append(out.results, res...), append(out.clientSide, cs...)
		return err
	}
	if err := send(d.cmd); err != nil {
		return err
	}
	reopen := false
	for _, x := range d.closing {
		id, found, err := r.parentHolding(ctx, x)
		if err != nil {
			return err
		}
		if found {
			reopen = true
			out.held = append(out.held, extractHeldBy(x, r.docVersionAt(d.coll, x.Version), id))
			continue
		}
		if err := r.state.MarkRunWindowClosed(finishing(ctx), x.Version, x.Index); err != nil {
			return err
		}
		r.cfg.log.Log(events.WindowClosed{Collection: d.coll})
	}
	if !reopen {
		return nil
	}
	// The proof failed after the collMod: what closed is reported held
	// unless recorded; the window of every unrecorded one goes back.
	open, err := r.openExtracts(ctx, d.coll, d.top)
	if err != nil {
		return err
	}
	if v := r.window.WithExtracts(d.inner, d.coll, open); v != nil {
		r.cfg.log.Log(events.WindowReopened{Collection: d.coll, Version: r.docVersionAt(d.coll, d.top)})
		return send(collModCommand(d.coll, bson.D{{Key: "validator", Value: v}}))
	}
	return nil
}

// extractHeld is why x's window stays open (nil: it may close): its
// extract is not done, a parent still holds the array, or a live release
// knows only a version of the parent below the one it has at x's
// migration.
func (r *Runner) extractHeld(ctx context.Context, x window.Extract, live []release.Release) (*HeldWindow, error) {
	target := r.docVersionAt(x.Op.From, x.Version)
	what := extractWhat(x)
	p, err := r.state.RunProgressOf(ctx, x.Version, x.Index, string(migration.RunExtract))
	if err != nil {
		return nil, err
	}
	if !p.Done {
		return &HeldWindow{Collection: x.Op.From, Target: target,
			Message: fmt.Sprintf("the validator window of %s stays open: %s is not done; a later up resumes it", x.Op.From, what)}, nil
	}
	id, found, err := r.parentHolding(ctx, x)
	if err != nil || found {
		h := extractHeldBy(x, target, id)
		return &h, err
	}
	if h := release.HoldWindow(live, x.Op.From, target); h != nil {
		h.Message = fmt.Sprintf("the validator window of %s stays open for %s: %s still running; they write the embedded %s the closed window would refuse; it closes on an up once they are gone",
			x.Op.From, what, release.Names(h.Releases, x.Op.From), x.Op.Array)
		return h, nil
	}
	return nil, nil
}

// extractHeldBy is x's window held because the parent id holds the array.
func extractHeldBy(x window.Extract, target int64, id any) HeldWindow {
	return HeldWindow{Collection: x.Op.From, Target: target,
		Message: fmt.Sprintf("the validator window of %s stays open for %s: %s _id %v still holds %s (written after the extract's last pass; a reader of the new release reads it with the children); it closes on an up once no %s document holds it",
			x.Op.From, extractWhat(x), x.Op.From, id, x.Op.Array, x.Op.From)}
}

func extractWhat(x window.Extract) string {
	return fmt.Sprintf("the extract of %s.%s (%s, run %d)", x.Op.From, x.Op.Array, migration.DisplayName(x.File), x.Index+1)
}

// parentHolding is the proof (limit 1): the _id of a parent of x that
// still holds the array, if any.
func (r *Runner) parentHolding(ctx context.Context, x window.Extract) (any, bool, error) {
	var doc struct {
		ID any `bson:"_id"`
	}
	err := r.db.Collection(x.Op.From).FindOne(ctx, x.Remains(),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("check that no %s document still holds %s: %w", x.Op.From, x.Op.Array, err)
	}
	return doc.ID, true, nil
}

// ExtractWindow is an open extract window as status shows it.
type ExtractWindow = statusview.ExtractWindow

// extractStatus lists cs's open extract windows as of migration top, and
// returns the validators the server may hold for it with them open (the
// window and the plain schema, each with the open extract windows).
func (r *Runner) extractStatus(ctx context.Context, cs *CollectionStatus, top int64) ([]bson.D, error) {
	if len(r.window.Extracts(cs.Name, top)) == 0 {
		return nil, nil
	}
	open, err := r.openExtracts(ctx, cs.Name, top)
	if err != nil || len(open) == 0 {
		return nil, err
	}
	for _, x := range open {
		cs.ExtractWindows = append(cs.ExtractWindows, ExtractWindow{Migration: x.Version, Run: x.Index + 1, Array: x.Op.Array})
	}
	var out []bson.D
	for _, v := range []bson.D{r.windowAt(cs.Name, top), r.plainAt(cs.Name, top)} {
		if w := r.window.WithExtracts(v, cs.Name, open); w != nil {
			out = append(out, w)
		}
	}
	return out, nil
}

// downWindow is r.windowAt with the extract windows open as of top held
// open: what down restores for a collection (at = the reverted
// migration - 1) keeps the window of an extract below it (invariant 7;
// the reverted migration's own is left out, its S_before is restored).
func (r *Runner) downWindow(ctx context.Context, top int64) (func(coll string, at int64) bson.D, error) {
	open := map[string][]window.Extract{}
	for _, coll := range r.extractSources(top) {
		xs, err := r.openExtracts(ctx, coll, top)
		if err != nil {
			return nil, err
		}
		open[coll] = xs
	}
	return func(coll string, at int64) bson.D {
		var below []window.Extract
		for _, x := range open[coll] {
			if x.Version <= at {
				below = append(below, x)
			}
		}
		return r.window.WithExtracts(r.windowAt(coll, at), coll, below)
	}, nil
}
