package runner

import (
	"context"
	"errors"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/pkg/lease"
)

// A down and a backfill of the same collection exclude each other: a
// backfill writes only under the collection's backfill lease or one of its
// range leases, after checking under that lease that its target is still
// applied (pkg/backfill, invariant 1), and a down that reverts a
// collection's upgrades first takes the collection's backfill lease and
// every range lease its stored plans name, of every target (plans are
// stored under the collection's lease, so no new one appears meanwhile),
// waiting the lock wait for a running backfill to stop. Every later backfill then finds
// the target reverted and writes nothing.

// holdBackfills runs fn holding the backfill and range leases of the
// collections a down to version to reverts (see above), besides the
// migration lock ctx carries: the leases are fenced with it (every write
// of fn checks them all) and fn's context is cancelled with
// [ErrLockLost] when one of them is lost. They are released when fn
// returns.
func (r *Runner) holdBackfills(ctx context.Context, to int64, fn func(ctx context.Context) error) (err error) {
	h, _ := lease.From(ctx)
	main, _ := h.(*held)
	var taken []lease.Locker
	defer func() {
		for _, l := range taken {
			err = errors.Join(err, l.Release(context.WithoutCancel(ctx)))
		}
	}()
	for _, coll := range downgradewalk.Reverted(r.migrations, to) {
		plans, err := r.state.Plans(ctx, coll)
		if err != nil {
			return err
		}
		names := []string{lease.Backfill(coll)}
		for _, p := range plans {
			for i := 0; i <= len(p.Splits); i++ {
				names = append(names, lease.BackfillRange(coll, p.Target, i))
			}
		}
		for _, name := range names {
			l, err := r.acquire(ctx, name, r.cfg.wait)
			if err != nil {
				var te *LockTimeoutError
				if errors.As(err, &te) {
					return &BackfillRunningError{Collection: coll, Lease: te}
				}
				return err
			}
			taken = append(taken, l)
		}
	}
	if main == nil || len(taken) == 0 {
		return fn(ctx)
	}
	main.Also = taken
	defer func() { main.Also = nil }()
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for _, l := range taken {
		go func() {
			select {
			case <-l.Lost():
				cancel(ErrLockLost)
			case <-lctx.Done():
			}
		}()
	}
	return fn(lctx)
}

// BackfillRunningError is a down refused because a backfill of a
// collection it reverts held its lease for longer than the lock wait.
type BackfillRunningError = downgradewalk.BackfillRunningError
