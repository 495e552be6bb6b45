package cli

import (
	"context"
	"errors"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

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

// stoppedBy words what ended a run partway: "interruption" for a signal
// (SIGINT, SIGTERM, SIGHUP: the context cancelled, or the runner's
// *InterruptedError), else "failure".
func stoppedBy(ctx context.Context, err error) string {
	var intr *runner.InterruptedError
	if errors.As(err, &intr) || ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return "interruption"
	}
	return "failure"
}
