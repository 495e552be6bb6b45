package backfill

import (
	"context"
	"time"

	"github.com/mongomig/mongomig/pkg/probe"
)

// Server error codes that say "try again": the primary changed or is
// shutting down, or a cursor was lost with its node.
// Retry budget for transient errors: 100 ms doubling to 5 s, 8 attempts
// (about 20 s in all), enough for a replica set election.
const (
	retryFirst    = 100 * time.Millisecond
	retryMax      = 5 * time.Second
	retryAttempts = 8
)

// retryTransient runs fn until it succeeds, fails with an error that is not
// transient, ctx ends, or the attempts run out; it returns fn's last error.
// fn must be safe to repeat (backfill's writes set absolute values and are
// filtered on what they change, so a repeat matches nothing or does the
// same).
func retryTransient(ctx context.Context, fn func() error) error {
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !probe.Transient(err) || attempt == retryAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}
