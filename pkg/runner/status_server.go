package runner

// The server checked against the files, for status: internal/declared
// compares what the server holds (validator, level, action, indexes) with
// what the applied migrations declare (drift.go there). Status only reads.

import (
	"context"

	"github.com/mongomig/mongomig/internal/serverstate"
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
	names := make([]string, len(st.Collections))
	for i, cs := range st.Collections {
		names[i] = cs.Name
	}
	drift, unchecked, err := r.declared().Drift(ctx, st.applied, top, names)
	if err != nil || unchecked != "" {
		st.ServerUnchecked = unchecked
		return err
	}
	for i := range st.Collections {
		st.Collections[i].ServerDrift = append(st.Collections[i].ServerDrift, drift[st.Collections[i].Name]...)
	}
	return nil
}
