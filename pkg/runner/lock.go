package runner

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/runlock"
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

// held is the lease a run's context carries (internal/runlock: the
// ledger's transaction and the leases held with it).
type held = runlock.Held

// fence checks, before a write, the lease the context holds; without one
// it allows the write.
func fence(ctx context.Context) error { return lease.Fence(ctx) }

// serverTime asks the server for its clock (see [lease.ServerTime]).
func serverTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
	return lease.ServerTime(ctx, db)
}

// acquire takes the lease id, waiting at most wait for a live holder
// ([runlock.Locks.Acquire]).
func (r *Runner) acquire(ctx context.Context, id string, wait time.Duration) (*held, error) {
	l := runlock.Locks{DB: r.db, Coll: r.db.Collection(r.cfg.lock), Lease: r.cfg.lease, Owner: r.cfg.owner, ForceTransactions: r.cfg.forceTransactions, Log: r.cfg.log}
	return l.Acquire(ctx, id, wait)
}

// withCommand names, for the lease's holder, the command that takes the
// migration lock.
func withCommand(ctx context.Context, cmd string) context.Context {
	return runlock.WithCommand(ctx, cmd)
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
