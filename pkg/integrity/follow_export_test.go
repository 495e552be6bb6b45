package integrity

import "context"

// FollowAfterProbe is Follow past its change-stream probe: what a test
// runs on a server without change streams to see the stream's aggregate
// sent (and refused).
func FollowAfterProbe(c *Checker, ctx context.Context, opts FollowOptions) error {
	return c.follow(ctx, opts)
}
