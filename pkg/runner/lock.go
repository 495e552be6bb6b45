package runner

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
)

// The runner's leases follow the protocol of [lease] (its package
// documentation states the invariants); this file only names them and
// ties them to a run's context.

// lockID is the _id of the migration lock document (up, down). A backfill
// takes a lease of its own per collection, "backfill:<collection>", in
// the same collection, so it never blocks a deploy.
const lockID = lease.MigrationLock

func backfillLockID(coll string) string { return lease.Backfill(coll) }

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

// held is the lease a run's context carries (see [Runner.withLockWait]).
type held struct {
	*lease.Held
	// txn: ledger writes run in a transaction with the lease's token.
	txn bool
	// also are leases held besides this one while it is (a down's
	// backfill leases, see holdBackfills): Fence checks them too.
	also []lease.Locker
	// takenOver is the expired holder this acquisition removed, if any
	// (see reassert.go).
	takenOver *lease.Info
}

// Fence returns nil only while this lease and those held with it are
// provably held.
func (h *held) Fence(ctx context.Context) error {
	if err := h.Held.Fence(ctx); err != nil {
		return err
	}
	for _, l := range h.also {
		if err := l.Fence(ctx); err != nil {
			return err
		}
	}
	return nil
}

// fence checks, before a write, the lease the context holds; without one
// it allows the write.
func fence(ctx context.Context) error { return lease.Fence(ctx) }

// TransactLedger runs a ledger write in a transaction with the lease's
// token where the server has them (see [ledger.Transactor]), after
// fencing the leases held with it.
func (h *held) TransactLedger(ctx context.Context, write func(ctx context.Context) error) (bool, error) {
	if !h.txn {
		return false, nil
	}
	for _, o := range h.also {
		if err := o.Fence(ctx); err != nil {
			return true, err
		}
	}
	return true, h.Transact(ctx, write)
}

// serverTime asks the server for its clock (see [lease.ServerTime]).
func serverTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
	return lease.ServerTime(ctx, db)
}

// leaseEvents turns the lease's events into the runner's.
func (r *Runner) leaseEvents(e lease.Event) {
	holder := ""
	if e.Holder != nil {
		holder = e.Holder.Holder()
	}
	switch e.Kind {
	case lease.EventWaiting:
		r.cfg.log.Log(events.LockWaiting{Lease: e.Name, Holder: holder, Text: e.Message})
	case lease.EventTakenOver:
		r.cfg.log.Log(events.LockTakenOver{Lease: e.Name, Holder: holder, Text: e.Message})
	case lease.EventAcquired:
		r.cfg.log.Log(events.LockAcquired{Lease: e.Name, Text: e.Message})
	case lease.EventReleased:
		r.cfg.log.Log(events.LockReleased{Lease: e.Name, Text: e.Message})
	}
}

// acquire takes the lease id, waiting at most wait for a live holder (0:
// one attempt, a *LockTimeoutError if the lease is held). For the
// migration lock it also learns whether ledger writes can be tied to the
// lease by a transaction, and says so once when they cannot.
func (r *Runner) acquire(ctx context.Context, id string, wait time.Duration) (*held, error) {
	var takenOver *lease.Info
	onEvent := func(e lease.Event) {
		if e.Kind == lease.EventTakenOver {
			takenOver = e.Holder
		}
		r.leaseEvents(e)
	}
	h, err := lease.Acquire(ctx, r.db.Collection(r.cfg.lock), id, lease.Options{Lease: r.cfg.lease, Wait: wait, Owner: r.cfg.owner, Command: leaseCommand(ctx, id), Events: onEvent})
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
		r.cfg.log.Log(events.LedgerFenceOnly{})
	}
	return &held{Held: h, txn: txn, takenOver: takenOver}, nil
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
func (r *Runner) withLockWait(ctx context.Context, id string, wait time.Duration, fn func(ctx context.Context) error) error {
	return lease.With(ctx, r, id, wait, fn)
}

// Acquire takes the lease name of the lock collection, waiting at most
// wait for a live holder (0: one attempt, a *LockTimeoutError if the lease
// is held): the runner is the [lease.Acquirer] of the other products
// (backfill's collection and range leases).
func (r *Runner) Acquire(ctx context.Context, name string, wait time.Duration) (lease.Locker, error) {
	return r.acquire(ctx, name, wait)
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
