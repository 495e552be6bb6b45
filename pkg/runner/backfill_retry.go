package runner

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Server error codes that say "try again": the primary changed or is
// shutting down, or a cursor was lost with its node.
var transientCodes = []int{
	6,     // HostUnreachable
	7,     // HostNotFound
	43,    // CursorNotFound (a read resumes from the last _id)
	89,    // NetworkTimeout
	91,    // ShutdownInProgress
	189,   // PrimarySteppedDown
	9001,  // SocketException
	10107, // NotWritablePrimary
	11600, // InterruptedAtShutdown
	11602, // InterruptedDueToReplStateChange
	13435, // NotPrimaryNoSecondaryOk
	13436, // NotPrimaryOrSecondary
}

// transient reports whether err is worth retrying as is: a network error, a
// server error labelled RetryableWriteError, or one of transientCodes. A
// cancelled or expired ctx is never transient.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if mongo.IsNetworkError(err) {
		return true
	}
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	if se.HasErrorLabel("RetryableWriteError") {
		return true
	}
	for _, c := range transientCodes {
		if se.HasErrorCode(c) {
			return true
		}
	}
	return false
}

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
		if err == nil || !transient(err) || attempt == retryAttempts {
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
