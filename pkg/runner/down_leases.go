package runner

import (
	"context"
	"errors"

	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
	"github.com/mongomig/mongomig/pkg/lease"
)

// A down and a backfill of the same collection exclude each other
// (internal/downgrade, leases.go, says how): the down takes the leases of
// every collection it reverts before its checks.

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
		names, err := downgradewalk.LeasesOf(ctx, r.state, coll)
		if err != nil {
			return err
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
