package runner

import (
	"context"

	"github.com/mongomig/mongomig/pkg/lease"
)

// Lease is a lease of the lock collection: the migration lock ("mongomig",
// taken by up and down), a collection's backfill lease
// ("backfill:<collection>") or a range lease of a parallel backfill.
type Lease = lease.Lease

// Leases lists every lease in the lock collection, sorted by name, each
// judged by the server's clock.
func (r *Runner) Leases(ctx context.Context) ([]Lease, error) {
	return lease.List(ctx, r.db.Collection(r.cfg.lock))
}

// UnlockLease removes the lease called name (see [Lease]): without force
// only if it expired, with force whatever its lease (only for a holder
// known to be dead). It returns the removed holder, nil if none was held.
func (r *Runner) UnlockLease(ctx context.Context, name string, force bool) (*LockInfo, error) {
	return lease.Remove(ctx, r.db.Collection(r.cfg.lock), name, force)
}
