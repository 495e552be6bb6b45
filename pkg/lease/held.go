package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Held is an acquired lease. It renews itself until [Held.Release] and
// fences its holder: see the package documentation.
type Held struct {
	name, token string
	coll        *mongo.Collection // majority write concern
	lease       time.Duration
	events      func(Event)
	stop        context.CancelFunc
	done        chan struct{} // the heartbeat ended
	lost        chan struct{}

	mu         sync.Mutex
	validUntil time.Time // monotonic
	lostErr    error     // set once, with lost closed
	released   bool
}

func newHeld(coll *mongo.Collection, name, token string, opts Options, sent time.Time) *Held {
	ctx, cancel := context.WithCancel(context.Background())
	h := &Held{name: name, token: token, coll: coll, lease: opts.Lease, events: opts.Events,
		stop: cancel, done: make(chan struct{}), lost: make(chan struct{})}
	h.renewed(sent)
	go h.heartbeat(ctx)
	return h
}

// Name is the lease's name (the _id of its document).
func (h *Held) Name() string { return h.name }

// Token is this acquisition's token: no other acquisition has it.
func (h *Held) Token() string { return h.token }

// Lost is closed once the lease is lost (its token gone from the server,
// or no renewal proven before validUntil); nothing is sent after.
func (h *Held) Lost() <-chan struct{} { return h.lost }

// Err is the loss (a [*LostError], which wraps [ErrLost]), or nil while
// the lease is held.
func (h *Held) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lostErr
}

// lose records the loss once and returns the first one recorded.
func (h *Held) lose(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lostErr == nil {
		h.lostErr = err
		close(h.lost)
	}
	return h.lostErr
}

// renewed records a successful acquisition or renewal whose request left
// at sent (local monotonic time).
func (h *Held) renewed(sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := sent.Add(h.lease - Margin(h.lease)); v.After(h.validUntil) {
		h.validUntil = v
	}
}

// until is validUntil and the send time of the renewal that set it.
func (h *Held) until() (validUntil, since time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.validUntil, h.validUntil.Add(-h.lease + Margin(h.lease))
}

// Fence returns an [ErrLost] when the lease may have expired or is no
// longer this acquisition's: the caller must not send the write it is
// about to send. Within validUntil it reads the lease document (one round
// trip) to prove the token is still there; past it, it renews once itself
// (the heartbeat may only be late, on a loaded machine): the renewal
// succeeds only if the server still holds this token with an unexpired
// lease. A failure there is final. A read that gets no answer (a network
// error, or no reply within the margin on a loaded machine) proves
// nothing either way: the clock is then the guarantee. Whether the read
// answered or not, Fence succeeds only if validUntil has not passed once
// the read returned (an answer that arrives late proves the token was
// there when the server read it, not that the lease still holds now); if
// it has, Fence renews as above.
func (h *Held) Fence(ctx context.Context) error {
	if err := h.Err(); err != nil {
		return err
	}
	validUntil, since := h.until()
	if time.Now().Before(validUntil) {
		if err := h.verify(ctx); err != nil {
			return err
		}
		// A renewal meanwhile (the heartbeat) moved validUntil: it counts.
		if validUntil, since = h.until(); time.Now().Before(validUntil) {
			return nil
		}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Margin(h.lease))
	defer cancel()
	if err := h.renew(rctx); err != nil {
		return h.lose(h.unproven(since, err))
	}
	return nil
}

// verify reads the lease document: a final ErrLost if the token is gone.
// A read that got no answer (a network error, or none within the margin)
// proves nothing, and err is nil: the caller checks validUntil after it.
func (h *Held) verify(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Margin(h.lease))
	defer cancel()
	err := h.coll.FindOne(rctx, h.mine(), options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return h.lose(&LostError{Name: h.name, Reason: LostTokenGone})
	case err != nil && (mongo.IsNetworkError(err) || mongo.IsTimeout(err)):
		// The server is unreachable or slow for now: the lease still
		// holds by our clock while validUntil has not passed, which is the
		// fence's guarantee (Fence checks it again); the write that
		// follows meets the same outage (and is fenced again when retried).
		return nil
	case err != nil:
		return &LostError{Name: h.name, Reason: LostUnverified, Err: err}
	}
	return nil
}

// mine matches this acquisition's document.
func (h *Held) mine() bson.D {
	return bson.D{{Key: "_id", Value: h.name}, {Key: "token", Value: h.token}}
}

// renew extends the lease once by the server's clock. It never extends a
// lease that already expired by that clock: another process may be taking
// it over right now.
func (h *Held) renew(ctx context.Context) error {
	sent := time.Now()
	now, err := ServerTime(ctx, h.coll.Database())
	if err != nil {
		return err
	}
	res, err := h.coll.UpdateOne(ctx, append(h.mine(), bson.E{Key: "expiresAt", Value: bson.D{{Key: "$gt", Value: now}}}),
		bson.D{{Key: "$set", Value: bson.D{{Key: "expiresAt", Value: now.Add(h.lease)}}}})
	switch {
	case err != nil:
		return fmt.Errorf("renew the lease %s: %w", h.name, err)
	case res.MatchedCount == 0:
		return h.lose(&LostError{Name: h.name, Reason: LostExpired})
	}
	h.renewed(sent)
	return nil
}

// heartbeat renews every quarter lease until stopped or lost. A failed
// renewal is retried at the next tick until validUntil has passed: then
// the lease is lost.
func (h *Held) heartbeat(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(h.lease / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.lost:
			return
		case <-t.C:
		}
		// A renewal is worth waiting for until validUntil (past it, at
		// least a margin): the fence needs no answer sooner.
		validUntil, _ := h.until()
		rctx, cancel := context.WithDeadline(ctx, later(validUntil, time.Now().Add(Margin(h.lease))))
		err := h.renew(rctx)
		cancel()
		if validUntil, since := h.until(); err != nil && ctx.Err() == nil && !time.Now().Before(validUntil) {
			h.lose(h.unproven(since, err))
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Release stops the heartbeat and deletes the lease document if it still
// holds this token, even when ctx was cancelled (SIGINT, SIGTERM), so the
// next contender starts at once. A lost lease sends nothing.
func (h *Held) Release(ctx context.Context) error {
	h.stop()
	<-h.done
	h.mu.Lock()
	skip := h.lostErr != nil || h.released
	h.released = true
	h.mu.Unlock()
	if skip {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := h.coll.DeleteOne(ctx, h.mine()); err != nil {
		return fmt.Errorf("release the lease %s: %w (it expires by itself after its lease)", h.name, err)
	}
	h.events(Event{Kind: EventReleased, Name: h.name, Message: h.name + " released"})
	return nil
}
