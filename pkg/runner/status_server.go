package runner

// The server checked against the files, for status: the validator, level,
// action and indexes (keys and options) of every collection of the
// applied migrations, as listCollections and listIndexes show them,
// compared with what the applied migrations declare. The comparison is
// serverstate.Compare's (what a takeover would put back), plus
// what reassert leaves alone: indexes no migration names, and index
// options other than unique. Status only reads.

import (
	"context"

	"github.com/mongomig/mongomig/internal/declared"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/probe"
)

// ServerDifference is one way the server differs from what the applied
// migrations declare for a collection (drift of the server).
type ServerDifference = serverstate.Drift

// serverDrift sets each collection's ServerDrift, or st.ServerUnchecked
// when the declared state cannot be known.
func (r *Runner) serverDrift(ctx context.Context, st *Status) error {
	top := maxApplied(st.applied)
	if top == 0 {
		return nil
	}
	src := r.declared()
	if reason := src.Uncheckable(st.applied, top); reason != "" {
		st.ServerUnchecked = reason
		return nil
	}
	states, err := src.States(ctx, st.applied, top)
	if err != nil {
		return err
	}
	server, err := serverstate.Read(ctx, r.db, declared.Names(states))
	if err != nil {
		return err
	}
	// FerretDB v1 (the embedded sandbox) lists no index option but unique
	// (a quirk: MongoDB lists each option an index was built with), so the
	// other options are compared only elsewhere.
	options := true
	if info, err := probe.Server(ctx, r.db); err == nil && info.FerretDBVersion != "" {
		options = false
	}
	byName := map[string]*CollectionStatus{}
	for i := range st.Collections {
		byName[st.Collections[i].Name] = &st.Collections[i]
	}
	for _, d := range states {
		cs := byName[d.Name]
		if cs == nil {
			continue
		}
		s := server[d.Name]
		_, levelFrom, _, actionFrom := r.declaredSettings(d.Name, top, st.applied)
		diffs, _ := serverstate.Compare(d, s)
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
			cs.ServerDrift = append(cs.ServerDrift, serverstate.DriftOf(e))
		}
		if !s.Exists {
			continue
		}
		more, err := serverstate.IndexDrift(ctx, r.db, d, options)
		if err != nil {
			return err
		}
		cs.ServerDrift = append(cs.ServerDrift, more...)
	}
	return nil
}
