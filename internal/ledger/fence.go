package ledger

import (
	"context"

	"github.com/mongomig/mongomig/pkg/lease"
)

// Transactor is a lease that ties the ledger's writes to itself where the
// server has transactions (invariant 1).
type Transactor interface {
	// TransactLedger runs write in one transaction with the lease's token
	// and reports true, or reports false without running it when the
	// ledger's writes are only fenced.
	TransactLedger(ctx context.Context, write func(ctx context.Context) error) (bool, error)
}

// fenced sends write, a ledger write, under the lease the context holds:
// in one transaction with the lease's token where the lease is a
// [Transactor] that has them (see [lease.Held.Transact]), elsewhere after
// the fence. Without a lease it allows the write.
func fenced(ctx context.Context, write func(ctx context.Context) error) error {
	l, ok := lease.From(ctx)
	if !ok {
		return write(ctx)
	}
	if t, ok := l.(Transactor); ok {
		if done, err := t.TransactLedger(ctx, write); done {
			return err
		}
	}
	if err := l.Fence(ctx); err != nil {
		return err
	}
	return write(ctx)
}
