// Package runlock is the runner's side of the lease protocol of package
// lease (whose documentation states its invariants): which command a lease
// document names as its holder's, the events a lease reports turned into
// the runner's, and the migration lock as the runner holds it, which ties
// the ledger's writes to the lease by a transaction with the lease's token
// where the server has transactions (else fences them) and fences the
// leases held with it (a down's backfill leases). It sends nothing but
// the lease protocol's own commands.
package runlock

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
)

// Held is a lease a run's context carries.
type Held struct {
	*lease.Held
	// Txn: ledger writes run in a transaction with the lease's token.
	Txn bool
	// Also are leases held besides this one while it is (a down's
	// backfill leases): Fence checks them too.
	Also []lease.Locker
	// TakenOver is the expired holder this acquisition removed, if any.
	TakenOver *lease.Info
}

// Fence returns nil only while this lease and those held with it are
// provably held.
func (h *Held) Fence(ctx context.Context) error {
	if err := h.Held.Fence(ctx); err != nil {
		return err
	}
	for _, l := range h.Also {
		if err := l.Fence(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TransactLedger runs a ledger write in a transaction with the lease's
// token where the server has them (the ledger's Transactor), after
// fencing the leases held with it; false: no transaction, the write is
// the caller's to fence.
func (h *Held) TransactLedger(ctx context.Context, write func(ctx context.Context) error) (bool, error) {
	if !h.Txn {
		return false, nil
	}
	for _, o := range h.Also {
		if err := o.Fence(ctx); err != nil {
			return true, err
		}
	}
	return true, h.Transact(ctx, write)
}

// Of is the lease ctx carries when it is one of the runner's (nil: none).
func Of(ctx context.Context) *Held {
	l, _ := lease.From(ctx)
	h, _ := l.(*Held)
	return h
}

// Locks takes the runner's leases in one lock collection.
type Locks struct {
	DB    *mongo.Database
	Coll  *mongo.Collection
	Lease time.Duration
	Owner string
	// ForceTransactions ties ledger writes to the migration lock by a
	// transaction without asking the server whether it has them.
	ForceTransactions bool
	Log               events.Logger
}

// Acquire takes the lease id, waiting at most wait for a live holder (0:
// one attempt, a *lease.TimeoutError if the lease is held). For the
// migration lock it also learns whether ledger writes can be tied to the
// lease by a transaction, and says so once when they cannot.
func (l *Locks) Acquire(ctx context.Context, id string, wait time.Duration) (*Held, error) {
	var takenOver *lease.Info
	onEvent := func(e lease.Event) {
		if e.Kind == lease.EventTakenOver {
			takenOver = e.Holder
		}
		l.event(e)
	}
	h, err := lease.Acquire(ctx, l.Coll, id, lease.Options{Lease: l.Lease, Wait: wait, Owner: l.Owner, Command: command(ctx, id), Events: onEvent})
	if err != nil {
		return nil, err
	}
	if id != lease.MigrationLock {
		return &Held{Held: h}, nil
	}
	txn := l.ForceTransactions
	if !txn {
		if txn, err = lease.Transactions(ctx, l.DB); err != nil {
			return nil, errors.Join(err, h.Release(ctx))
		}
	}
	if !txn {
		l.Log.Log(events.LedgerFenceOnly{})
	}
	return &Held{Held: h, Txn: txn, TakenOver: takenOver}, nil
}

// event turns the lease's events into the runner's.
func (l *Locks) event(e lease.Event) {
	holder := ""
	if e.Holder != nil {
		holder = e.Holder.Holder()
	}
	switch e.Kind {
	case lease.EventWaiting:
		l.Log.Log(events.LockWaiting{Lease: e.Name, Holder: holder, Text: e.Message})
	case lease.EventTakenOver:
		l.Log.Log(events.LockTakenOver{Lease: e.Name, Holder: holder, Text: e.Message})
	case lease.EventAcquired:
		l.Log.Log(events.LockAcquired{Lease: e.Name, Text: e.Message})
	case lease.EventReleased:
		l.Log.Log(events.LockReleased{Lease: e.Name, Text: e.Message})
	}
}

type commandKey struct{}

// WithCommand names, for the lease's holder, the command that takes the
// migration lock (up, down, mark, buckets).
func WithCommand(ctx context.Context, cmd string) context.Context {
	return context.WithValue(ctx, commandKey{}, cmd)
}

// command is what a lease's document says its holder runs.
func command(ctx context.Context, id string) string {
	if cmd, ok := ctx.Value(commandKey{}).(string); ok {
		return cmd
	}
	if strings.HasPrefix(id, "backfill:") {
		return "backfill"
	}
	return ""
}
