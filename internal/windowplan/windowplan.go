// Package windowplan decides which validator window pkg/runner sends for
// a collection whose documents carry versions (internal/window computes
// the windows and states their invariants): the version window's
// validator for a migration (the plain schema once a backfill proved, and
// a fresh query confirms, that no other version remains), the collMods
// that close windows now (tightening) and those held for live releases
// (pkg/release), the extract windows' opening and closing decisions with
// why each stays open (extract.go), and the validator down restores. It
// reads the checkpoints and run-once progress (internal/state), the proof
// queries (limit 1) and the release announcements; it sends nothing: the
// runner sends the collMods under the migration lock and records the
// windows it closed or reopened.
package windowplan

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/version"
)

// Source is what the windows are decided from.
type Source struct {
	DB         *mongo.Database
	Migrations []*migration.Migration
	Registry   *version.Registry
	Window     *window.Set
	State      *state.Store
	// AllowOldReleases closes windows while releases that know only older
	// versions are live.
	AllowOldReleases bool
}

// For returns the validator to send for coll when applying migration v,
// and whether it is the (open) window: the plain schema only when a
// backfill proved, and a fresh query confirms, that no document is at
// another version than the current one (internal/window, invariant 2).
func (s *Source) For(ctx context.Context, coll string, v int64) (validator bson.D, open bool, err error) {
	cv := s.Window.DocVersionAt(coll, v)
	w := s.Window.At(coll, v)
	if cv == 0 || w == nil {
		w, err := s.WithExtracts(ctx, coll, v, w) // extract.go
		return w, false, err
	}
	proven, err := s.ProvenNow(ctx, coll, cv)
	if err != nil {
		return nil, false, err
	}
	if proven {
		w, err := s.WithExtracts(ctx, coll, v, s.Window.Plain(coll, v))
		return w, false, err
	}
	w, err = s.WithExtracts(ctx, coll, v, w)
	return w, true, err
}

// ProvenNow reports whether the checkpoint of coll claims that no document
// below cv remains and a query (limit 1) confirms it now.
func (s *Source) ProvenNow(ctx context.Context, coll string, cv int64) (bool, error) {
	cp, err := s.State.Read(ctx, coll)
	if err != nil || cp == nil || !cp.Proven || cp.Target != cv {
		return false, err
	}
	other, err := s.OtherVersionRemains(ctx, coll, cv)
	return !other, err
}

// OtherVersionRemains reports whether a query (limit 1) finds a document
// of coll at another version than cv.
func (s *Source) OtherVersionRemains(ctx context.Context, coll string, cv int64) (bool, error) {
	err := s.DB.Collection(coll).FindOne(ctx, s.Registry.VersionNot(cv),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("check that no %s document is below version %d: %w", coll, cv, err)
	}
	return true, nil
}

// Tighten are the collMods that close the windows that can close once
// migration top is applied: for each collection whose validator is a
// window, whose backfill claims no document below its current version
// remains, whose window is not closed yet, and for which a fresh query
// confirms the claim, a collMod with the plain schema.
func (s *Source) Tighten(ctx context.Context, top int64) ([]cmddoc.Command, error) {
	var cmds []cmddoc.Command
	for _, name := range bsonx.CollectionsWithValidators(s.Migrations) {
		cv := s.Window.DocVersionAt(name, top)
		if cv == 0 || s.Window.At(name, top) == nil {
			continue
		}
		cp, err := s.State.Read(ctx, name)
		if err != nil {
			return nil, err
		}
		if cp == nil || cp.Tightened {
			continue
		}
		proven, err := s.ProvenNow(ctx, name, cv)
		if err != nil {
			return nil, err
		}
		if !proven {
			continue
		}
		plain, err := s.WithExtracts(ctx, name, top, s.Window.Plain(name, top))
		if err != nil {
			return nil, err
		}
		cmd := cmddoc.CollMod(name, bson.D{{Key: "validator", Value: plain}})
		cmd.Tighten = true
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// Hold splits cmds, Tighten's collMods once migration top is applied,
// into those to send and the windows held for live releases that know
// only older versions of the collection (none without announcements, or
// with AllowOldReleases).
func (s *Source) Hold(ctx context.Context, top int64, cmds []cmddoc.Command) ([]cmddoc.Command, []release.HeldWindow, error) {
	if len(cmds) == 0 || s.AllowOldReleases {
		return cmds, nil, nil
	}
	live, err := release.Live(ctx, s.DB, "")
	if err != nil || len(live) == 0 {
		return cmds, nil, err
	}
	var keep []cmddoc.Command
	var held []release.HeldWindow
	for _, c := range cmds {
		if h := release.HoldWindow(live, c.Collection, s.Window.DocVersionAt(c.Collection, top)); h != nil {
			held = append(held, *h)
		} else {
			keep = append(keep, c)
		}
	}
	return keep, held, nil
}

// DownOpen are the collMods that send, before a revert of migration v
// downgrades the documents of downs, each collection's window as of v
// (with its open extract windows), so the downgraded documents stay
// writable.
func (s *Source) DownOpen(ctx context.Context, v int64, downs []downgrade.Pending) ([]cmddoc.Command, error) {
	var opened []cmddoc.Command
	for _, d := range downs {
		w, err := s.WithExtracts(ctx, d.Coll, v, s.Window.At(d.Coll, v))
		if err != nil {
			return nil, err
		}
		if w != nil {
			opened = append(opened, cmddoc.CollMod(d.Coll, bson.D{{Key: "validator", Value: w}}))
		}
	}
	return opened, nil
}

// Reopened is the collMod that sends coll's window again as of migration
// top (with its open extract windows): what up sends when the proof after
// a tightening collMod finds a document at another version.
func (s *Source) Reopened(ctx context.Context, coll string, top int64) (cmddoc.Command, error) {
	open, err := s.WithExtracts(ctx, coll, top, s.Window.At(coll, top))
	return cmddoc.CollMod(coll, bson.D{{Key: "validator", Value: open}}), err
}

// Tightened reports whether coll's checkpoint records its window closed.
func (s *Source) Tightened(ctx context.Context, coll string) (bool, error) {
	cp, err := s.State.Read(ctx, coll)
	return cp != nil && cp.Tightened, err
}
