package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/pkg/version"
)

// ErrUnknownCollection is returned when a collection named by the caller
// is not one the migration files describe for that purpose; it is
// [version.ErrUnknownCollection], which every product wraps.
var ErrUnknownCollection = version.ErrUnknownCollection

// InterruptedError is an Up or Down whose context was cancelled (SIGINT,
// SIGTERM): it stopped at the next safe point, between two commands sent
// to the server, and released the lock. The migrations in Done were
// applied (or reverted) and recorded; Partial, when not nil, is the one it
// stopped inside: its commands so far are on the server but it is not
// recorded, and running the same command again finishes it (every command
// is idempotent).
type InterruptedError struct {
	Direction Direction // up or down
	Done      []Applied
	Total     int           // migrations the run meant to apply or revert
	Partial   *PartialError // the migration it stopped inside, if any
	Cause     error         // context.Cause of the cancelled context
	// Downgraded: documents the revert it stopped inside had downgraded.
	Downgraded *DowngradedDocuments
}

func (e *InterruptedError) Error() string {
	return e.Message("running " + string(e.Direction) + " again (to the same target) continues")
}

// Message is the error's message ending with next (what continues the
// run, as the caller words it).
func (e *InterruptedError) Message(next string) string {
	past := "applied"
	if e.Direction == "down" {
		past = "reverted"
	}
	msg := fmt.Sprintf("interrupted: %d of %d migrations %s", len(e.Done), e.Total, past)
	if e.Total == 0 {
		msg = "interrupted before anything was " + past
	}
	if p := e.Partial; p != nil {
		msg += fmt.Sprintf("; %s stopped between commands (%d done, %d not done) and is not recorded", p.File, len(p.Done), 1+len(p.NotDone))
	}
	if d := e.Downgraded; d != nil {
		msg += "; " + d.String()
	}
	return msg + "; " + next
}

// Unwrap returns the cancellation cause, so errors.Is(err, context.Canceled) holds.
func (e *InterruptedError) Unwrap() error { return e.Cause }

// finishing returns the context in which to finish a step whose commands
// all ran (recording a migration): an interruption waits for it, a lost
// lock does not.
func finishing(ctx context.Context) context.Context {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), ErrLockLost) {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// interrupted turns the error of a run whose caller's context was
// cancelled into an [InterruptedError]; other errors pass unchanged.
func interrupted(ctx context.Context, err error, direction Direction, done []Applied, total int) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ErrLockLost) {
		return err
	}
	ie := &InterruptedError{Direction: direction, Done: done, Total: total, Cause: context.Cause(ctx), Downgraded: downgradedBy(err)}
	var pe *PartialError
	if errors.As(err, &pe) && errors.Is(pe.Err, context.Canceled) {
		ie.Partial = pe
	}
	return ie
}
