package downgrade

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/probe"
)

// A down and a backfill of the same collection exclude each other: a
// backfill writes only under the collection's backfill lease or one of its
// range leases, after checking under that lease that its target is still
// applied (pkg/backfill, invariant 1), and a down that reverts a
// collection's upgrades first takes the collection's backfill lease and
// every range lease its stored plans name, of every target (plans are
// stored under the collection's lease, so no new one appears meanwhile),
// waiting the lock wait for a running backfill to stop. Every later
// backfill then finds the target reverted and writes nothing.

// LeasesOf are the leases of coll, a collection a down reverts
// ([Reverted]), that the down takes (see above): its backfill lease, then
// the range leases of every plan st stores for it. The down reads them
// collection by collection, each just before it takes them.
func LeasesOf(ctx context.Context, st *state.Store, coll string) ([]string, error) {
	plans, err := st.Plans(ctx, coll)
	if err != nil {
		return nil, err
	}
	names := []string{lease.Backfill(coll)}
	for _, p := range plans {
		for i := 0; i <= len(p.Splits); i++ {
			names = append(names, lease.BackfillRange(coll, p.Target, i))
		}
	}
	return names, nil
}

// GuardScans says, for a revert that downgrades total documents, whether
// the server evaluates a guarded write by scanning the collection, and
// why (it reads buildInfo only when total > 0). The guards stay: the lock
// keeps other mongomig runs out, not the application, and a write
// filtered on _id alone would overwrite an application write made since
// down read the document.
func GuardScans(ctx context.Context, db *mongo.Database, total int64) (scans bool, reason string, err error) {
	if total == 0 {
		return false, "", nil
	}
	info, err := probe.Server(ctx, db)
	if err != nil {
		return false, "", err
	}
	g := probe.GuardedWrites(info)
	return !g.Available, g.Reason, nil
}
