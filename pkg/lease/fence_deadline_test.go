package lease

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestFenceNeverSucceedsPastValidUntil: renewals stalled (the heartbeat
// stopped), the fence's verification read answers, but only after
// validUntil has passed (its answer is held back in the command monitor
// until then). Fence used to return nil on any answer, so a write it
// allowed went out with none of the server's lease proven left (3 to 26
// ms left, once -1 ms). It must renew instead: whenever it
// returns nil, validUntil lies ahead.
func TestFenceNeverSucceedsPastValidUntil(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	var holder atomic.Pointer[Held]
	var slow atomic.Bool
	monitor := &event.CommandMonitor{Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
		if h := holder.Load(); h != nil && e.CommandName == "find" && slow.Load() {
			v, _ := h.until()
			time.Sleep(time.Until(v) + 5*time.Millisecond)
		}
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(monitor)).Database("leasefence")
	h, err := Acquire(ctx, db.Collection("locks"), "fenced", Options{Lease: time.Second, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Release(ctx) }()
	h.stop() // renewals stalled
	<-h.done
	holder.Store(h)
	v, _ := h.until()
	// Fence while a margin's worth of validUntil is left; the read's
	// answer arrives after it. (Waking up late only makes Fence renew
	// directly: the check below holds either way.)
	time.Sleep(time.Until(v) - Margin(h.lease)/4)
	slow.Store(true)
	err = h.Fence(ctx)
	returned := time.Now()
	slow.Store(false)
	if now, _ := h.until(); err == nil && !returned.Before(now) {
		t.Fatalf("Fence returned nil %v after validUntil (renewals stalled, its read answered late)", returned.Sub(now))
	}
	if err != nil {
		t.Fatalf("Fence: %v; want a renewal (the server still holds the token)", err)
	}
}
