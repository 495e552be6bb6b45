package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// lockID is the _id of the migration lock document (up, down). A backfill
// takes a lease of its own per collection, "backfill:<collection>", in
// the same collection, so it never blocks a deploy.
const lockID = "mongomig"

func backfillLockID(coll string) string { return "backfill:" + coll }

// LockInfo describes a lock holder.
type LockInfo struct {
	Owner      string    `bson:"owner" json:"owner"`
	Host       string    `bson:"host" json:"host"`
	PID        int       `bson:"pid" json:"pid"`
	AcquiredAt time.Time `bson:"acquiredAt" json:"acquiredAt"`
	ExpiresAt  time.Time `bson:"expiresAt" json:"expiresAt"`
}

func (l LockInfo) String() string {
	return fmt.Sprintf("%s (host %s, pid %d), taken %s, lease until %s",
		l.Owner, l.Host, l.PID, l.AcquiredAt.UTC().Format(time.RFC3339), l.ExpiresAt.UTC().Format(time.RFC3339))
}

// ErrLockTimeout is returned (wrapped in a [*LockTimeoutError]) when
// another process held the lock for longer than the configured wait.
var ErrLockTimeout = errors.New("migration lock not acquired in time")

// LockTimeoutError names the holder of the lock.
type LockTimeoutError struct {
	Holder LockInfo
	Waited time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("%v: held by %s after waiting %v; if that process is gone, its lease expires by itself, or run `mongomig unlock --force`",
		ErrLockTimeout, e.Holder, e.Waited.Round(time.Millisecond))
}

func (e *LockTimeoutError) Unwrap() error { return ErrLockTimeout }

// ErrLockLost is returned when the heartbeat finds the lock taken by
// another process (our lease expired, for example after a long pause).
var ErrLockLost = errors.New("migration lock lost: our lease expired and another process took it over")

// lock is a held lease. It fences itself: validUntil is, on this
// process's monotonic clock, the latest instant at which the lease
// certainly has not expired (the local time taken before the request that
// set or renewed expiresAt, plus the lease, minus a safety margin for
// clock rates and round trips). Past it, [lock.fence] refuses, so a holder
// that was paused (SIGSTOP, a long GC, a frozen VM) or whose renewals fail
// sends nothing more, even before it learns that another process took
// over. The token is fresh per acquisition: renewals and the release match
// it, so a process can never renew or delete a lease it no longer holds.
type lock struct {
	id     string
	coll   *mongo.Collection
	owner  string
	token  string
	lease  time.Duration
	stop   context.CancelFunc
	done   chan struct{}
	lost   chan struct{}
	events func(Event)

	// renew extends the lease once (what the heartbeat does at each tick).
	renew func(ctx context.Context) error

	mu         sync.Mutex
	validUntil time.Time // monotonic
	lostOnce   sync.Once
}

// markLost closes lost once.
func (l *lock) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

// leaseMargin is subtracted from the lease when fencing: renewals run
// every third of the lease, so a holder whose renewals fail still has one
// retry before it fences.
func leaseMargin(lease time.Duration) time.Duration { return lease / 5 }

// renewed records a successful acquisition or renewal whose request left
// at sent (local monotonic time).
func (l *lock) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v := sent.Add(l.lease - leaseMargin(l.lease)); v.After(l.validUntil) {
		l.validUntil = v
	}
}

// fence returns ErrLockLost when the lease may have expired or was taken
// over: the caller must not send the write it is about to send. Past
// validUntil it renews once itself (the heartbeat may only be late, on a
// loaded machine): the renewal succeeds only if the server still holds our
// token with an unexpired lease, and then proves the lease for a new term.
func (l *lock) fence(ctx context.Context) error {
	select {
	case <-l.lost:
		return ErrLockLost
	default:
	}
	l.mu.Lock()
	valid := time.Now().Before(l.validUntil)
	since := l.validUntil.Add(-l.lease + leaseMargin(l.lease))
	l.mu.Unlock()
	if valid {
		// Within the lease by our clock; one read proves the lock document
		// still carries our token (an `unlock --force` by an operator who
		// thought us dead removes it), before every write.
		return l.verify(ctx)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseMargin(l.lease))
	defer cancel()
	if err := l.renew(rctx); err != nil {
		return fmt.Errorf("%w (no renewal proven since %s: this process may have been paused, or the server is unreachable: %v)", ErrLockLost, since.Format(time.RFC3339), err)
	}
	return nil
}

// verify reads the lock document: ErrLockLost if our token is gone.
func (l *lock) verify(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseMargin(l.lease))
	defer cancel()
	err := l.coll.FindOne(rctx, bson.D{{Key: "_id", Value: l.id}, {Key: "token", Value: l.token}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		l.markLost()
		return fmt.Errorf("%w (the lock document no longer holds this process's token: removed by unlock --force, or taken over)", ErrLockLost)
	case err != nil && transient(err):
		// The server is unreachable for now: the lease still holds by our
		// clock, which is the fence's guarantee; the write that follows
		// meets the same outage and is retried (and fenced again).
		return nil
	case err != nil:
		return fmt.Errorf("%w (cannot verify the lock: %v)", ErrLockLost, err)
	}
	return nil
}

type lockKey struct{}

// fence checks, before a write, the leases the context holds (see
// [Runner.withLock]); without one it allows the write.
func fence(ctx context.Context) error {
	if l, ok := ctx.Value(lockKey{}).(*lock); ok {
		return l.fence(ctx)
	}
	return nil
}

// serverTime asks the server for its clock (hello's localTime), so that
// lease expiry never depends on the clocks of the machines running mongomig.
func serverTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
	var hello struct {
		LocalTime time.Time `bson:"localTime"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return time.Time{}, fmt.Errorf("read server time: %w", err)
	}
	if hello.LocalTime.IsZero() {
		return time.Time{}, errors.New("read server time: hello has no localTime")
	}
	return hello.LocalTime, nil
}

// acquireLock takes the lock, waiting up to wait while another live process
// holds it and taking over a lock whose lease expired (by the server's
// clock). The lock is taken by inserting a document with a fixed _id, the
// one write that is atomic on every server.
func (r *Runner) acquireLock(ctx context.Context, id string) (*lock, error) {
	return r.acquireLockWait(ctx, id, r.cfg.wait)
}

// acquireLockWait is acquireLock waiting at most wait for a live holder
// (0: one attempt, a *LockTimeoutError if the lease is held).
func (r *Runner) acquireLockWait(ctx context.Context, id string, wait time.Duration) (*lock, error) {
	// Majority: an acknowledged acquisition survives a failover.
	coll := r.db.Collection(r.cfg.lock, options.Collection().SetWriteConcern(writeconcern.Majority()))
	host, _ := os.Hostname()
	start := time.Now()
	announced := false
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		now, err := serverTime(ctx, r.db)
		if err != nil {
			return nil, err
		}
		token := newToken()
		doc := bson.D{
			{Key: "_id", Value: id}, {Key: "owner", Value: r.cfg.owner}, {Key: "token", Value: token}, {Key: "host", Value: host},
			{Key: "pid", Value: os.Getpid()}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(r.cfg.lease)},
		}
		_, err = coll.InsertOne(ctx, doc)
		if err == nil {
			r.cfg.events(Event{Kind: EventLockAcquired, Message: "lock acquired by " + r.cfg.owner})
			return r.startHeartbeat(coll, id, token, sent), nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return nil, fmt.Errorf("acquire lock in %s: %w", r.cfg.lock, err)
		}
		var holder LockInfo
		switch err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&holder); {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // released between our insert and our read
		case err != nil:
			return nil, fmt.Errorf("read lock holder: %w", err)
		}
		if !holder.ExpiresAt.After(now) {
			// Expired by the server's clock: remove exactly that stale
			// document (same owner and expiry), then race for the insert.
			_, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "owner", Value: holder.Owner}, {Key: "expiresAt", Value: holder.ExpiresAt}})
			if err != nil {
				return nil, fmt.Errorf("take over expired lock: %w", err)
			}
			r.cfg.events(Event{Kind: EventLockTakenOver, Message: "took over the expired lock of " + holder.String()})
			continue
		}
		waited := time.Since(start)
		if waited >= wait {
			return nil, &LockTimeoutError{Holder: holder, Waited: waited}
		}
		if !announced {
			r.cfg.events(Event{Kind: EventLockWaiting, Message: "waiting for the lock held by " + holder.String()})
			announced = true
		}
		// Jittered backoff, capped by the remaining wait and the lease.
		sleep := min(time.Duration(100+rand.IntN(200))*time.Millisecond*time.Duration(min(attempt+1, 8)), wait-waited, holder.ExpiresAt.Sub(now)+50*time.Millisecond)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(max(sleep, 10*time.Millisecond)):
		}
	}
}

func newToken() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}

// startHeartbeat renews the lease every third of it until release; a
// failed renewal is retried at the next tick, and the fence stops the
// holder once no renewal is proven within the lease minus the margin.
func (r *Runner) startHeartbeat(coll *mongo.Collection, id, token string, sent time.Time) *lock {
	ctx, cancel := context.WithCancel(context.Background())
	l := &lock{id: id, coll: coll, owner: r.cfg.owner, token: token, lease: r.cfg.lease, stop: cancel, done: make(chan struct{}), lost: make(chan struct{}), events: r.cfg.events}
	l.renew = func(ctx context.Context) error {
		sent := time.Now()
		now, err := serverTime(ctx, r.db)
		if err != nil {
			return err
		}
		// Never extend a lease that already expired by the server's
		// clock: another process may be taking it over right now.
		res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: l.id}, {Key: "token", Value: l.token}, {Key: "expiresAt", Value: bson.D{{Key: "$gt", Value: now}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "expiresAt", Value: now.Add(l.lease)}}}})
		switch {
		case err != nil:
			return fmt.Errorf("renew the lease: %w", err)
		case res.MatchedCount == 0:
			l.markLost()
			return errors.New("the lease expired or another process holds it")
		}
		l.renewed(sent)
		return nil
	}
	l.renewed(sent)
	go func() {
		defer close(l.done)
		t := time.NewTicker(r.cfg.lease / 4)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.lost:
				return
			case <-t.C:
			}
			// A failed renewal is retried at the next tick; the fence
			// covers the rest.
			_ = l.renew(ctx)
		}
	}()
	return l
}

// Lost is closed when the heartbeat finds the lock no longer ours.
func (l *lock) Lost() <-chan struct{} { return l.lost }

// release stops the heartbeat and deletes the lock if it is still ours,
// even when ctx was cancelled (Ctrl-C).
func (l *lock) release(ctx context.Context) error {
	l.stop()
	<-l.done
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := l.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: l.id}, {Key: "token", Value: l.token}})
	if err != nil {
		return fmt.Errorf("release lock: %w (it expires by itself after its lease)", err)
	}
	l.events(Event{Kind: EventLockReleased, Message: "lock released"})
	return nil
}

// LockStatus reports who holds the lock, if anyone, and whether its lease
// has expired by the server's clock.
func (r *Runner) LockStatus(ctx context.Context) (holder *LockInfo, expired bool, err error) {
	var h LockInfo
	err = r.db.Collection(r.cfg.lock).FindOne(ctx, bson.D{{Key: "_id", Value: lockID}}).Decode(&h)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read lock: %w", err)
	}
	now, err := serverTime(ctx, r.db)
	if err != nil {
		return nil, false, err
	}
	return &h, !h.ExpiresAt.After(now), nil
}

// Unlock removes the lock. Without force it removes only an expired lock
// and refuses a live one; with force it removes any, for a holder that is
// known to be gone. It returns the removed holder, or nil if there was none.
func (r *Runner) Unlock(ctx context.Context, force bool) (*LockInfo, error) {
	h, expired, err := r.LockStatus(ctx)
	if err != nil || h == nil {
		return nil, err
	}
	if !expired && !force {
		return h, fmt.Errorf("the lock is held by %s and its lease has not expired; if that process is gone, wait for the lease or use --force", h)
	}
	if _, err := r.db.Collection(r.cfg.lock).DeleteOne(ctx, bson.D{{Key: "_id", Value: lockID}, {Key: "owner", Value: h.Owner}}); err != nil {
		return h, fmt.Errorf("remove lock: %w", err)
	}
	return h, nil
}

// withLock runs fn holding the lock. fn's context is cancelled with
// ErrLockLost if the heartbeat finds the lock taken over; the lock is
// released afterwards, also when ctx was cancelled.
func (r *Runner) withLock(ctx context.Context, id string, fn func(ctx context.Context) error) (err error) {
	return r.withLockWait(ctx, id, r.cfg.wait, fn)
}

// withLockWait is withLock waiting at most wait for a live holder.
func (r *Runner) withLockWait(ctx context.Context, id string, wait time.Duration, fn func(ctx context.Context) error) (err error) {
	l, err := r.acquireLockWait(ctx, id, wait)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := l.release(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}()
	lctx, cancel := context.WithCancelCause(context.WithValue(ctx, lockKey{}, l))
	defer cancel(nil)
	go func() {
		select {
		case <-l.Lost():
			cancel(ErrLockLost)
		case <-lctx.Done():
		}
	}()
	err = fn(lctx)
	if err != nil && context.Cause(lctx) == ErrLockLost && !errors.Is(err, ErrLockLost) {
		return fmt.Errorf("%w: %v", ErrLockLost, err)
	}
	return err
}
