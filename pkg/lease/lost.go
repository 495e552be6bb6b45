package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// LostReason says how a lease was lost: what the holder saw.
type LostReason string

const (
	// LostUnreachable: no renewal was proven within the lease because the
	// server did not answer (a network error, no server to select, or no
	// reply in time). Nobody need have taken the lease over; once it
	// expires by the server's clock, anyone may.
	LostUnreachable LostReason = "unreachable"
	// LostTokenGone: the lease document no longer holds this
	// acquisition's token: removed by `unlock --force`, or taken over by
	// another process after it expired.
	LostTokenGone LostReason = "tokenGone"
	// LostExpired: a renewal the server answered matched nothing: the
	// lease expired by the server's clock (this process was paused, or
	// slow, for longer than the rest of its lease), or another process
	// holds it now.
	LostExpired LostReason = "expired"
	// LostUnverified: the server answered the read or renewal that was
	// to prove the lease with an error (Err), such as a refusal.
	LostUnverified LostReason = "unverified"
)

// LostError is a lease loss: which lease, why, and (for a loss to an
// unanswered or refused renewal) since when nothing was proven and the
// server's or network's error. It wraps [ErrLost].
type LostError struct {
	Name   string
	Reason LostReason
	// Since is the send time of the last renewal proven (local clock);
	// zero when the reason does not involve one.
	Since time.Time
	// Err is what the renewal or verification got instead of an answer.
	Err error
}

func (e *LostError) Error() string {
	what := Describe(e.Name) + " lost"
	since := ""
	if !e.Since.IsZero() {
		since = " since " + e.Since.Format(time.RFC3339)
	}
	switch e.Reason {
	case LostUnreachable:
		return fmt.Sprintf("%s: the server did not answer its renewal (%v), so no renewal was proven%s for a whole lease; nothing more is sent for it", what, e.Err, since)
	case LostTokenGone:
		return what + ": its document no longer holds this process's token (removed by a forced unlock, or taken over by another process after it expired)"
	case LostExpired:
		return what + ": it expired by the server's clock before it could be renewed (this process was paused or slow for longer than its lease), or another process holds it"
	}
	return fmt.Sprintf("%s: the server refused to prove it%s: %v", what, since, e.Err)
}

// Unwrap is [ErrLost] and, if any, the error that left the lease unproven.
func (e *LostError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrLost}
	}
	return []error{ErrLost, e.Err}
}

// unanswered reports whether err means the server gave no answer: a
// network error, no server to select, or a timeout.
func unanswered(err error) bool {
	var sel topology.ServerSelectionError
	return mongo.IsNetworkError(err) || mongo.IsTimeout(err) || errors.As(err, &sel) || errors.Is(err, context.DeadlineExceeded)
}

// unproven is the loss of a lease none of whose renewals was proven
// since since; err is the last renewal's error.
func (h *Held) unproven(since time.Time, err error) *LostError {
	reason := LostUnverified
	if unanswered(err) {
		reason = LostUnreachable
	}
	return &LostError{Name: h.name, Reason: reason, Since: since, Err: err}
}

// lostCause is what a context cancelled for l's loss carries: l's own
// [LostError] where l records one, else [ErrLost].
func lostCause(l Locker) error {
	if e, ok := l.(interface{ Err() error }); ok {
		if err := e.Err(); err != nil {
			return err
		}
	}
	return ErrLost
}
