package backfill_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
)

// TestBackfillRateCapsEveryBatch: under --rate no batch (client path) or
// _id range (server-side path) holds more documents than the rate allows
// in a second, the first included (the first used to be a whole --batch),
// and progress shows the rate over the run, which never exceeds the cap
// (it used to show the first batch's burst).
func TestBackfillRateCapsEveryBatch(t *testing.T) {
	const rate = 2
	for _, c := range []struct {
		coll string
		opts backfill.Options
	}{
		{"users", backfill.Options{ClientSide: true}},
		{"orders", backfill.Options{ServerSide: true, AssumeNoWriters: true}},
	} {
		t.Run(c.coll, func(t *testing.T) {
			_, _, r := sampleApplied(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls int
			var last int64
			opts := c.opts
			opts.Collections, opts.Rate, opts.Batch = []string{c.coll}, rate, 50
			opts = backfill.WithProgress(opts, func(p events.BackfillBatch) {
				if n := p.Upgraded - last; n > rate {
					t.Errorf("a batch of %d documents under --rate %d", n, rate)
				}
				last = p.Upgraded
				if got := float64(p.Upgraded) / p.Elapsed.Seconds(); got > rate {
					t.Errorf("progress after %d documents in %s shows %.1f docs/s, above the rate", p.Upgraded, p.Elapsed, got)
				}
				if calls++; calls == 2 {
					cancel()
				}
			})
			res, err := backfill.Run(ctx, r, opts)
			if err != nil || res.Stopped != "interrupted" || calls != 2 || last == 0 {
				t.Fatalf("%+v %v after %d progress calls", res, err, calls)
			}
			if c.opts.ServerSide && res.Collections[0].ServerSide != last {
				t.Errorf("server-side: %d of %d upgraded on the server", res.Collections[0].ServerSide, last)
			}
		})
	}
}
