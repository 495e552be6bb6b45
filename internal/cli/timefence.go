package cli

import "github.com/mongomig/mongomig/pkg/events"

// noteTimeFence gives the "the server has no transactions" note
// (events.LedgerFenceOnly) once, when the run is about to write the
// ledger: before the first migration it applies or reverts, an accepted
// drift, or a window it closes.
func (e *env) noteTimeFence(ev events.Entry) {
	if !e.timeFenceHeld {
		return
	}
	switch ev.(type) {
	case events.MigrationStarted, events.DriftAccepted, events.WindowClosed:
		e.timeFenceHeld, e.notedTimeFence = false, true
		e.logf("%s (see docs/reliability.md)", events.LedgerFenceOnly{})
	}
}
