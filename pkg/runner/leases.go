package runner

import (
	"context"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Lease is a held lease of the lock collection: the migration lock
// ("mongomig", taken by up and down) or a collection's backfill lease
// ("backfill:<collection>").
type Lease struct {
	Name     string `bson:"_id" json:"name"`
	LockInfo `bson:",inline"`
	// Expired: the lease ran out by the server's clock (its holder is gone
	// or paused); the next taker removes it.
	Expired bool `bson:"-" json:"expired"`
}

// Leases lists every lease in the lock collection, sorted by name, each
// judged by the server's clock.
func (r *Runner) Leases(ctx context.Context) ([]Lease, error) {
	cur, err := r.db.Collection(r.cfg.lock).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	var out []Lease
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	if len(out) == 0 {
		return []Lease{}, nil
	}
	now, err := serverTime(ctx, r.db)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Expired = !out[i].ExpiresAt.After(now)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// UnlockLease removes the lease called name (see [Lease]): without force
// only if it expired, with force whatever its lease (only for a holder
// known to be dead). It returns the removed holder, nil if none was held.
func (r *Runner) UnlockLease(ctx context.Context, name string, force bool) (*LockInfo, error) {
	leases, err := r.Leases(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if l.Name != name {
			continue
		}
		if !l.Expired && !force {
			return &l.LockInfo, fmt.Errorf("the lease %s is held by %s and has not expired; if that process is gone, wait for the lease or use --force", name, l.LockInfo)
		}
		if _, err := r.db.Collection(r.cfg.lock).DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: l.Owner}, {Key: "acquiredAt", Value: l.AcquiredAt}}); err != nil {
			return &l.LockInfo, fmt.Errorf("remove lease %s: %w", name, err)
		}
		return &l.LockInfo, nil
	}
	return nil, nil
}
