package leasetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
)

// holdCauseNamesTheLoss: a holder running under [lease.Hold] whose network
// is cut sees its context cancelled with the loss itself as the cause (a
// *lease.LostError naming the lease, reason unreachable), and Hold returns
// it. The cause used to be the bare lease.ErrLost, whose text said
// "another process took it over": what a backfill whose server went down
// reported, though nobody had taken anything over.
func holdCauseNamesTheLoss(t *testing.T, s suite) {
	d := &cutDialer{}
	hc := s.collection(t, options.Client().SetDialer(d))
	h := s.acquire(t, hc, "backfill:users", s.options("partitioned"))
	var cause error
	err := lease.Hold(context.Background(), h, func(ctx context.Context) error {
		d.setCut(true)
		<-ctx.Done() // the heartbeat gives up once the lease has passed
		cause = context.Cause(ctx)
		return ctx.Err()
	})
	for what, e := range map[string]error{"the context's cause": cause, "Hold's error": err} {
		var lost *lease.LostError
		if !errors.As(e, &lost) || !errors.Is(e, lease.ErrLost) || lost.Reason != lease.LostUnreachable || lost.Name != "backfill:users" {
			t.Errorf("%s: %v (%#v), want a LostError for backfill:users, reason unreachable", what, e, lost)
			continue
		}
		if msg := e.Error(); !strings.Contains(msg, "lease backfill:users lost: the server did not answer its renewal") || strings.Contains(msg, "took it over") {
			t.Errorf("%s says %q", what, msg)
		}
	}
}
