package downgrade

import (
	"context"
	"errors"
	"testing"

	"github.com/mongomig/mongomig/pkg/lease"
)

// TestBatchContext: a batch of down's writes outlives an interruption (so
// the documents counted as downgraded are those written) but not a lost
// lock, whether the lock was lost before the batch started or during it.
func TestBatchContext(t *testing.T) {
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // SIGINT landed before the batch was decided on
		wctx, stop := batchContext(ctx)
		if err := wctx.Err(); err != nil {
			t.Errorf("batch context cancelled by an interruption: %v", err)
		}
		stop()
		if wctx.Err() == nil {
			t.Error("batch context still live after stop")
		}
	})
	t.Run("lock lost during the batch", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		wctx, stop := batchContext(ctx)
		defer stop()
		cancel(lease.ErrLost)
		<-wctx.Done()
		if cause := context.Cause(wctx); !errors.Is(cause, lease.ErrLost) {
			t.Errorf("cause %v; want lease.ErrLost", cause)
		}
	})
	t.Run("lock lost before the batch", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(lease.ErrLost)
		wctx, stop := batchContext(ctx)
		defer stop()
		if cause := context.Cause(wctx); !errors.Is(cause, lease.ErrLost) {
			t.Errorf("cause %v; want lease.ErrLost at once", cause)
		}
	})
}
