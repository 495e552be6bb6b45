package lease

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Locker is a lease this process holds: what a writer fences with before
// each write, watches for loss, and releases. *Held satisfies it.
type Locker interface {
	// Name is the lease's name (its document's _id).
	Name() string
	// Fence returns nil only while the lease is provably still held.
	Fence(ctx context.Context) error
	// Lost is closed when the lease is lost.
	Lost() <-chan struct{}
	// Release gives the lease up.
	Release(ctx context.Context) error
}

var _ Locker = (*Held)(nil)

// Acquirer takes leases by name, waiting at most wait for a live holder
// (0: one attempt; a *TimeoutError when it is held).
type Acquirer interface {
	Acquire(ctx context.Context, name string, wait time.Duration) (Locker, error)
}

type ctxKey struct{}

// ContextWith returns ctx carrying l: [Fence] and [From] find it.
func ContextWith(ctx context.Context, l Locker) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the lease ctx carries, if any.
func From(ctx context.Context) (Locker, bool) {
	l, ok := ctx.Value(ctxKey{}).(Locker)
	return l, ok
}

// Fence checks, before a write, the lease ctx carries; without one it
// allows the write (the caller holds no lease to lose).
func Fence(ctx context.Context) error {
	if l, ok := From(ctx); ok {
		return l.Fence(ctx)
	}
	return nil
}

// Hold runs fn holding l: fn's context carries l and is cancelled with
// l's loss as its cause when l is lost (its [*LostError], or [ErrLost]); l is released afterwards, also
// when ctx was cancelled. An error of fn's while the lease was lost wraps
// ErrLost.
func Hold(ctx context.Context, l Locker, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if rerr := l.Release(ctx); rerr != nil && err == nil {
			err = rerr
		}
	}()
	lctx, cancel := context.WithCancelCause(ContextWith(ctx, l))
	defer cancel(nil)
	go func() {
		select {
		case <-l.Lost():
			cancel(lostCause(l))
		case <-lctx.Done():
		}
	}()
	err = fn(lctx)
	if cause := context.Cause(lctx); err != nil && errors.Is(cause, ErrLost) && !errors.Is(err, ErrLost) {
		return fmt.Errorf("%w: %v", cause, err)
	}
	return err
}

// With acquires name through a and runs fn holding it (see [Hold]).
func With(ctx context.Context, a Acquirer, name string, wait time.Duration, fn func(ctx context.Context) error) error {
	l, err := a.Acquire(ctx, name, wait)
	if err != nil {
		return err
	}
	return Hold(ctx, l, fn)
}

// Backfill is the name of collection coll's backfill lease: the one a
// single backfill walk, a parallel backfill's sweep, and a down that
// reverts coll's upgrades take.
func Backfill(coll string) string { return "backfill:" + coll }

// BackfillRange is the name of the lease of range i of coll's parallel
// backfill to version target ("backfill:users:v3:range:0"). Ranges of
// different targets (the plans of two releases) are different ranges: their
// leases never block each other.
func BackfillRange(coll string, target int64, i int) string {
	return fmt.Sprintf("backfill:%s:v%d:range:%d", coll, target, i)
}
