// Package declared reads what the applied migrations declare of each
// collection's schema against what the server holds: the validator (the
// window internal/window computes, or its plain schema once a backfill's
// checkpoint in internal/state proved or closed it), the level and
// action, and the indexes (serverstate.Declared); how the server differs
// from it (serverstate.Compare) and the commands that put it back
// (internal/cmddoc). pkg/runner sends those after a takeover of the
// migration lock, after a late send and before up's pending migrations,
// and status reports the differences. It reads and sends nothing else.
package declared

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Source is what the declared state is read from.
type Source struct {
	DB         *mongo.Database
	Migrations []*migration.Migration
	Window     *window.Set
	State      *state.Store
}

// Fixes is how the server differs from the declared state of the applied
// migrations (up to Top) and the commands that put it back; Unchecked
// says why the declared state cannot be known.
type Fixes struct {
	Top         int64
	Collections int
	Diffs       []serverstate.Difference
	Cmds        []cmddoc.Command
	Unchecked   string
}

// Fixes reads the server's validators, levels, actions and indexes and
// compares them with what the migrations entries records as applied
// declare.
func (s *Source) Fixes(ctx context.Context, entries map[int64]ledger.Entry) (Fixes, error) {
	f := Fixes{Top: ledger.MaxApplied(entries)}
	if f.Top == 0 {
		return f, nil
	}
	if f.Unchecked = s.Uncheckable(entries, f.Top); f.Unchecked != "" {
		return f, nil
	}
	states, err := s.States(ctx, entries, f.Top)
	if err != nil {
		return f, err
	}
	server, err := serverstate.Read(ctx, s.DB, Names(states))
	if err != nil {
		return f, err
	}
	f.Collections = len(states)
	for _, d := range states {
		diffs, fixes := serverstate.Compare(d, server[d.Name])
		f.Diffs, f.Cmds = append(f.Diffs, diffs...), append(f.Cmds, cmddoc.Fixes(d.Name, fixes)...)
	}
	return f, nil
}

// Names are the collections of states, in their order.
func Names(states []serverstate.Declared) []string {
	names := make([]string, len(states))
	for i, d := range states {
		names[i] = d.Name
	}
	return names
}

// Uncheckable says why the declared state cannot be known: an applied
// migration whose file is missing or changed, or a file below the top one
// that is not applied.
func (s *Source) Uncheckable(entries map[int64]ledger.Entry, top int64) string {
	for v, e := range entries {
		m := s.migration(v)
		if m == nil {
			return fmt.Sprintf("migration %d (%s) is applied but its file is not in this directory (another release applied it)", v, e.File)
		}
		if !ledger.SameSchema(e, m) {
			return m.File + " changed since it was applied"
		}
	}
	for _, m := range s.Migrations {
		if _, ok := entries[m.Version]; !ok && m.Version < top {
			return fmt.Sprintf("%s is not applied but migration %d is", m.File, top)
		}
	}
	return ""
}

func (s *Source) migration(v int64) *migration.Migration {
	for _, m := range s.Migrations {
		if m.Version == v {
			return m
		}
	}
	return nil
}

// States lists what the applied migrations (up to top) declare, per
// collection, in name order.
func (s *Source) States(ctx context.Context, entries map[int64]ledger.Entry, top int64) ([]serverstate.Declared, error) {
	states := serverstate.Declare(s.Migrations, func(v int64) bool { _, ok := entries[v]; return ok })
	clientSide := map[string]bool{}
	for _, e := range entries {
		for _, c := range e.ClientSideValidators {
			clientSide[c] = true
		}
	}
	for i := range states {
		if err := s.validator(ctx, &states[i], top, clientSide[states[i].Name]); err != nil {
			return nil, err
		}
	}
	return states, nil
}

// validator sets d's validator: the window as of top, or its plain
// schema once the window was closed (or a backfill proved it may be),
// with the level and action the server holds with it.
func (s *Source) validator(ctx context.Context, d *serverstate.Declared, top int64, clientSide bool) error {
	w := s.Window.At(d.Name, top)
	if w == nil || clientSide {
		d.Level, d.Action = "", ""
		return nil
	}
	// A level or action no applied migration declares is the collection's
	// own (docs/file-format.md: an omitted one keeps the server's): d keeps
	// it empty, and Compare leaves it alone.
	d.Validator = w
	if err := s.versionValidator(ctx, d, top); err != nil {
		return err
	}
	// An open extract window (internal/window, invariant 7) holds the
	// schema before its migration beside whatever the version window gives.
	open, err := s.Window.OpenExtracts(d.Name, top, func(x window.Extract) (bool, error) {
		return s.State.RunWindowClosed(ctx, x.Version, x.Index)
	})
	if err != nil || len(open) == 0 {
		return err
	}
	d.Validator = s.Window.WithExtracts(d.Validator, d.Name, open)
	if d.Also != nil {
		d.Also = s.Window.WithExtracts(d.Also, d.Name, open)
	}
	return nil
}

// versionValidator sets d's validator to the version window's plain
// schema once it was closed, or offers it as an alternative once a
// backfill proved it may be.
func (s *Source) versionValidator(ctx context.Context, d *serverstate.Declared, top int64) error {
	cv := s.Window.DocVersionAt(d.Name, top)
	if cv == 0 {
		return nil
	}
	cp, err := s.State.Read(ctx, d.Name)
	if err != nil || cp == nil || cp.Target != cv {
		return err
	}
	switch plain := s.Window.Plain(d.Name, top); {
	case cp.Tightened:
		d.Validator = plain
	case cp.Proven:
		d.Also = plain
	}
	return nil
}
