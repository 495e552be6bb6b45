package declared

// The server checked against the files, for status: the validator, level,
// action and indexes (keys and options) of every collection of the
// applied migrations, as listCollections and listIndexes show them,
// compared with what the applied migrations declare. The comparison is
// serverstate.Compare's (what a takeover would put back), plus what
// reassert leaves alone: indexes no migration names, and index options
// other than unique. It only reads.

import (
	"context"
	"slices"

	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Drift is the ways the server differs from what the applied migrations
// (entries, up to top) declare, by collection, for the collections of
// names; unchecked, when not "", says why the declared state cannot be
// known (nothing is compared).
func (s *Source) Drift(ctx context.Context, entries map[int64]ledger.Entry, top int64, names []string) (drift map[string][]serverstate.Drift, unchecked string, err error) {
	if reason := s.Uncheckable(entries, top); reason != "" {
		return nil, reason, nil
	}
	states, err := s.States(ctx, entries, top)
	if err != nil {
		return nil, "", err
	}
	server, err := serverstate.Read(ctx, s.DB, Names(states))
	if err != nil {
		return nil, "", err
	}
	// FerretDB v1 (the embedded sandbox) lists no index option but unique
	// (a quirk: MongoDB lists each option an index was built with), so the
	// other options are compared only elsewhere.
	options := true
	if info, err := probe.Server(ctx, s.DB); err == nil && info.FerretDBVersion != "" {
		options = false
	}
	applied := func(v int64) bool { _, ok := entries[v]; return ok }
	drift = map[string][]serverstate.Drift{}
	for _, d := range states {
		if !slices.Contains(names, d.Name) {
			continue
		}
		sv := server[d.Name]
		_, levelFrom, _, actionFrom := serverstate.DeclaredSettings(s.Migrations, d.Name, top, applied)
		diffs, _ := serverstate.Compare(d, sv)
		for _, e := range diffs {
			if (e.What == "validationLevel" && levelFrom == 0) || (e.What == "validationAction" && actionFrom == 0) {
				continue // none declared: the collection keeps the server's
			}
			if e.What == "validationLevel" {
				e.From = levelFrom
			}
			if e.What == "validationAction" {
				e.From = actionFrom
			}
			drift[d.Name] = append(drift[d.Name], serverstate.DriftOf(e))
		}
		if !sv.Exists {
			continue
		}
		more, err := serverstate.IndexDrift(ctx, s.DB, d, options)
		if err != nil {
			return nil, "", err
		}
		drift[d.Name] = append(drift[d.Name], more...)
	}
	return drift, "", nil
}
