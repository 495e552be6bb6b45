package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/lease"
)

// The runner's leases follow the protocol of [lease] (its package
// documentation states the invariants); this file only names them and
// ties them to a run's context.

// lockID is the _id of the migration lock document (up, down). A backfill
// takes a lease of its own per collection, "backfill:<collection>", in
// the same collection, so it never blocks a deploy.
const lockID = lease.MigrationLock

func backfillLockID(coll string) string { return "backfill:" + coll }

// LockInfo describes a lock holder.
type LockInfo = lease.Info

// ErrLockTimeout is returned (wrapped in a [*LockTimeoutError]) when
// another process held the lock for longer than the configured wait.
var ErrLockTimeout = lease.ErrTimeout

// LockTimeoutError names the lease and its holder.
type LockTimeoutError = lease.TimeoutError

// ErrLockLost is returned when this process can no longer prove it holds
// its lease (it expired, for example after a long pause, or another
// process took it over, or it was removed by `unlock --force`). It is
// [lease.ErrLost].
var ErrLockLost = lease.ErrLost

// EventLedgerFence: the server has no transactions, so the ledger write
// is fenced by time only; Message says so, once per run.
const EventLedgerFence EventKind = "ledger.timeFenceOnly"

// held is the lease a run's context carries (see [Runner.withLockWait]).
type held struct {
	*lease.Held
	// txn: ledger writes run in a transaction with the lease's token.
	txn bool
}

type lockKey struct{}

// fence checks, before a write, the lease the context holds; without one
// it allows the write.
func fence(ctx context.Context) error {
	if h, ok := ctx.Value(lockKey{}).(*held); ok {
		return h.Fence(ctx)
	}
	return nil
}

// fencedWrite sends write, a ledger write, under the lease the context
// holds: where the server has transactions in one transaction with the
// lease's token (see [lease.Held.Transact]), elsewhere after the fence.
func fencedWrite(ctx context.Context, write func(ctx context.Context) error) error {
	h, ok := ctx.Value(lockKey{}).(*held)
	switch {
	case !ok:
		return write(ctx)
	case h.txn:
		return h.Transact(ctx, write)
	}
	if err := h.Fence(ctx); err != nil {
		return err
	}
	return write(ctx)
}

// serverTime asks the server for its clock (see [lease.ServerTime]).
func serverTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
	return lease.ServerTime(ctx, db)
}

// leaseEvents turns the lease's events into the runner's.
func (r *Runner) leaseEvents(e lease.Event) {
	kind := map[lease.EventKind]EventKind{
		lease.EventWaiting: EventLockWaiting, lease.EventTakenOver: EventLockTakenOver,
		lease.EventAcquired: EventLockAcquired, lease.EventReleased: EventLockReleased,
	}[e.Kind]
	r.cfg.events(Event{Kind: kind, Message: e.Message})
}

// acquire takes the lease id, waiting at most wait for a live holder (0:
// one attempt, a *LockTimeoutError if the lease is held). For the
// migration lock it also learns whether ledger writes can be tied to the
// lease by a transaction, and says so once when they cannot.
func (r *Runner) acquire(ctx context.Context, id string, wait time.Duration) (*held, error) {
	h, err := lease.Acquire(ctx, r.db.Collection(r.cfg.lock), id, lease.Options{Lease: r.cfg.lease, Wait: wait, Owner: r.cfg.owner, Command: leaseCommand(ctx, id), Events: r.leaseEvents})
	if err != nil {
		return nil, err
	}
	if id != lockID {
		return &held{Held: h}, nil
	}
	txn := r.cfg.forceTransactions
	if !txn {
		if txn, err = lease.Transactions(ctx, r.db); err != nil {
			return nil, errors.Join(err, h.Release(ctx))
		}
	}
	if !txn {
		r.cfg.events(Event{Kind: EventLedgerFence, Message: "the server has no transactions (standalone or FerretDB): the ledger write is fenced by the lease's clock only, not tied to the lock by a transaction"})
	}
	return &held{Held: h, txn: txn}, nil
}

type commandKey struct{}

// withCommand names, for the lease's holder, the command that takes the
// migration lock (up or down).
func withCommand(ctx context.Context, cmd string) context.Context {
	return context.WithValue(ctx, commandKey{}, cmd)
}

// leaseCommand is what a lease's document says its holder runs.
func leaseCommand(ctx context.Context, id string) string {
	if cmd, ok := ctx.Value(commandKey{}).(string); ok {
		return cmd
	}
	if strings.HasPrefix(id, "backfill:") {
		return "backfill"
	}
	return ""
}

// withLock runs fn holding the migration lock or a backfill lease. fn's
// context is cancelled with ErrLockLost when the lease is lost; the lease
// is released afterwards, also when ctx was cancelled.
func (r *Runner) withLock(ctx context.Context, id string, fn func(ctx context.Context) error) (err error) {
	return r.withLockWait(ctx, id, r.cfg.wait, fn)
}

// withLockWait is withLock waiting at most wait for a live holder.
func (r *Runner) withLockWait(ctx context.Context, id string, wait time.Duration, fn func(ctx context.Context) error) (err error) {
	h, err := r.acquire(ctx, id, wait)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := h.Release(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}()
	lctx, cancel := context.WithCancelCause(context.WithValue(ctx, lockKey{}, h))
	defer cancel(nil)
	go func() {
		select {
		case <-h.Lost():
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

// LockStatus reports who holds the migration lock, if anyone, and whether
// its lease has expired by the server's clock.
func (r *Runner) LockStatus(ctx context.Context) (holder *LockInfo, expired bool, err error) {
	leases, err := r.Leases(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, l := range leases {
		if l.Name == lockID {
			return &l.Info, l.Expired, nil
		}
	}
	return nil, false, nil
}

// Unlock removes the migration lock. Without force it removes only an
// expired lock and refuses a live one; with force it removes any, for a
// holder that is known to be gone. It returns the removed holder, or nil
// if there was none.
func (r *Runner) Unlock(ctx context.Context, force bool) (*LockInfo, error) {
	return r.UnlockLease(ctx, lockID, force)
}
