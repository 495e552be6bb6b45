package windowplan

// The extract window (internal/window, invariants 5 to 7): while an
// extract's migration declares a validator for the parent, the parent's
// validator also accepts the schema in force before that migration, until
// the extract is done, a fresh proof finds no parent holding the array,
// and no older release is live. This file holds it open in every
// validator sent for the parent (WithExtracts), decides which windows up's
// tighten closes and says why the others stay open. Its flag is the
// operation's run-once progress (internal/state); down forgets that,
// which reopens it.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
)

// OpenExtracts are the extract windows of coll as of migration at that
// were not closed.
func (s *Source) OpenExtracts(ctx context.Context, coll string, at int64) ([]window.Extract, error) {
	return s.Window.OpenExtracts(coll, at, func(x window.Extract) (bool, error) {
		return s.State.RunWindowClosed(ctx, x.Version, x.Index)
	})
}

// WithExtracts is v, the validator of coll as of migration at, with
// coll's open extract windows held open ([window.Set.WithExtracts]).
func (s *Source) WithExtracts(ctx context.Context, coll string, at int64, v bson.D) (bson.D, error) {
	if len(s.Window.Extracts(coll, at)) == 0 {
		return v, nil
	}
	open, err := s.OpenExtracts(ctx, coll, at)
	if err != nil {
		return nil, err
	}
	return s.Window.WithExtracts(v, coll, open), nil
}

// versionValidator is what the version window gives coll once migration
// top is applied, without the extract windows: its plain schema once
// closed, else the window (internal/declared reads it the same way).
func (s *Source) versionValidator(ctx context.Context, coll string, top int64) (bson.D, error) {
	cv := s.Window.DocVersionAt(coll, top)
	if cv == 0 {
		return s.Window.At(coll, top), nil
	}
	cp, err := s.State.Read(ctx, coll)
	if err != nil {
		return nil, err
	}
	if cp != nil && cp.Tightened && cp.Target == cv {
		return s.Window.Plain(coll, top), nil
	}
	return s.Window.At(coll, top), nil
}

// extractSources are the parents of the extracts of the migrations up to
// top, in name order.
func (s *Source) extractSources(top int64) []string {
	seen := map[string]bool{}
	for _, m := range s.Migrations {
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

// Closing is one parent whose extract windows Closing may close (Staying
// stay open), and the collMod that closes them (Cmd.Collection empty:
// none to send).
type Closing struct {
	Coll             string
	Top              int64
	Closing, Staying []window.Extract
	Inner            bson.D // the version window's part
	Cmd              cmddoc.Command
}

// Reopen is the collMod that sends c's window again, with every extract
// window of c.Coll still open as of c.Top (ok false: none to send): what
// up sends when the proof after c.Cmd found a parent holding the array.
func (s *Source) Reopen(ctx context.Context, c Closing) (cmd cmddoc.Command, ok bool, err error) {
	open, err := s.OpenExtracts(ctx, c.Coll, c.Top)
	if err != nil {
		return cmd, false, err
	}
	if v := s.Window.WithExtracts(c.Inner, c.Coll, open); v != nil {
		return cmddoc.CollMod(c.Coll, bson.D{{Key: "validator", Value: v}}), true, nil
	}
	return cmd, false, nil
}

// PlanExtracts are the collMods up would send to close extract windows
// once migration top is applied, and the windows it would leave open
// (the dry run of ExtractDecisions).
func (s *Source) PlanExtracts(ctx context.Context, top int64) ([]cmddoc.Command, []release.HeldWindow, error) {
	cs, held, err := s.ExtractDecisions(ctx, top)
	var cmds []cmddoc.Command
	for _, c := range cs {
		if c.Cmd.Collection != "" {
			cmds = append(cmds, c.Cmd)
		}
	}
	return cmds, held, err
}

// Prove proves again, once c.Cmd is in force (an old release's write in
// between was accepted), that no parent of each extract c closes holds
// the array: closed runs, in order, for each one proved (the runner
// records it closed), and each other one is returned held (so far, with
// an error); with one held, the window goes back ([Source.Reopen]).
func (s *Source) Prove(ctx context.Context, c Closing, closed func(x window.Extract) error) ([]release.HeldWindow, error) {
	var held []release.HeldWindow
	for _, x := range c.Closing {
		id, found, err := s.ParentHolding(ctx, x)
		if err != nil {
			return held, err
		}
		if found {
			held = append(held, s.HeldBy(x, id))
			continue
		}
		if err := closed(x); err != nil {
			return held, err
		}
	}
	return held, nil
}

// ExtractDecisions decides, for each extract window of the migrations up
// to top, whether it may close now (invariant 6), and says why each
// other one stays open. It sends nothing (the dry run shows it).
func (s *Source) ExtractDecisions(ctx context.Context, top int64) ([]Closing, []release.HeldWindow, error) {
	var live []release.Release
	if !s.AllowOldReleases && len(s.extractSources(top)) > 0 {
		var err error
		if live, err = release.Live(ctx, s.DB, ""); err != nil {
			return nil, nil, err
		}
	}
	var out []Closing
	var held []release.HeldWindow
	for _, coll := range s.extractSources(top) {
		open, err := s.OpenExtracts(ctx, coll, top)
		if err != nil {
			return nil, nil, err
		}
		c := Closing{Coll: coll, Top: top}
		for _, x := range open {
			h, err := s.extractHeld(ctx, x, live)
			if err != nil {
				return nil, nil, err
			}
			if h != nil {
				held = append(held, *h)
				c.Staying = append(c.Staying, x)
			} else {
				c.Closing = append(c.Closing, x)
			}
		}
		if len(c.Closing) == 0 {
			continue
		}
		if c.Inner, err = s.versionValidator(ctx, coll, top); err != nil {
			return nil, nil, err
		}
		if v := s.Window.WithExtracts(c.Inner, coll, c.Staying); v != nil {
			c.Cmd = cmddoc.CollMod(coll, bson.D{{Key: "validator", Value: v}})
			c.Cmd.Tighten = true
		}
		out = append(out, c)
	}
	return out, held, nil
}

// extractHeld is why x's window stays open (nil: it may close): its
// extract is not done, a parent still holds the array, or a live release
// knows only a version of the parent below the one it has at x's
// migration.
func (s *Source) extractHeld(ctx context.Context, x window.Extract, live []release.Release) (*release.HeldWindow, error) {
	target := s.Window.DocVersionAt(x.Op.From, x.Version)
	what := extractWhat(x)
	p, err := s.State.RunProgressOf(ctx, x.Version, x.Index, string(migration.RunExtract))
	if err != nil {
		return nil, err
	}
	if !p.Done {
		return &release.HeldWindow{Collection: x.Op.From, Target: target,
			Message: fmt.Sprintf("the validator window of %s stays open: %s is not done; a later up resumes it", x.Op.From, what)}, nil
	}
	id, found, err := s.ParentHolding(ctx, x)
	if err != nil || found {
		h := s.HeldBy(x, id)
		return &h, err
	}
	if h := release.HoldWindow(live, x.Op.From, target); h != nil {
		h.Message = fmt.Sprintf("the validator window of %s stays open for %s: %s still running; they write the embedded %s the closed window would refuse; it closes on an up once they are gone",
			x.Op.From, what, release.Names(h.Releases, x.Op.From), x.Op.Array)
		return h, nil
	}
	return nil, nil
}

// HeldBy is x's window held because the parent id holds the array.
func (s *Source) HeldBy(x window.Extract, id any) release.HeldWindow {
	return release.HeldWindow{Collection: x.Op.From, Target: s.Window.DocVersionAt(x.Op.From, x.Version),
		Message: fmt.Sprintf("the validator window of %s stays open for %s: %s _id %v still holds %s (written after the extract's last pass; a reader of the new release reads it with the children); it closes on an up once no %s document holds it",
			x.Op.From, extractWhat(x), x.Op.From, id, x.Op.Array, x.Op.From)}
}

func extractWhat(x window.Extract) string {
	return fmt.Sprintf("the extract of %s.%s (%s, run %d)", x.Op.From, x.Op.Array, migration.DisplayName(x.File), x.Index+1)
}

// ParentHolding is the proof (limit 1): the _id of a parent of x that
// still holds the array, if any.
func (s *Source) ParentHolding(ctx context.Context, x window.Extract) (any, bool, error) {
	var doc struct {
		ID any `bson:"_id"`
	}
	err := s.DB.Collection(x.Op.From).FindOne(ctx, x.Remains(),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("check that no %s document still holds %s: %w", x.Op.From, x.Op.Array, err)
	}
	return doc.ID, true, nil
}

// ExtractStatus lists coll's open extract windows as of migration top,
// and the validators the server may hold for it with them open (the
// window and the plain schema, each with the open extract windows).
func (s *Source) ExtractStatus(ctx context.Context, coll string, top int64) ([]statusview.ExtractWindow, []bson.D, error) {
	if len(s.Window.Extracts(coll, top)) == 0 {
		return nil, nil, nil
	}
	open, err := s.OpenExtracts(ctx, coll, top)
	if err != nil || len(open) == 0 {
		return nil, nil, err
	}
	var rows []statusview.ExtractWindow
	for _, x := range open {
		rows = append(rows, statusview.ExtractWindow{Migration: x.Version, Run: x.Index + 1, Array: x.Op.Array})
	}
	var out []bson.D
	for _, v := range []bson.D{s.Window.At(coll, top), s.Window.Plain(coll, top)} {
		if w := s.Window.WithExtracts(v, coll, open); w != nil {
			out = append(out, w)
		}
	}
	return rows, out, nil
}

// DownWindow is Window.At with the extract windows open as of top held
// open: what down restores for a collection (at = the reverted
// migration - 1) keeps the window of an extract below it (invariant 7;
// the reverted migration's own is left out, its S_before is restored).
func (s *Source) DownWindow(ctx context.Context, top int64) (func(coll string, at int64) bson.D, error) {
	open := map[string][]window.Extract{}
	for _, coll := range s.extractSources(top) {
		xs, err := s.OpenExtracts(ctx, coll, top)
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
		return s.Window.WithExtracts(s.Window.At(coll, at), coll, below)
	}, nil
}
