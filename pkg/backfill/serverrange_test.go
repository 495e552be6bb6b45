package backfill_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// TestBackfillServerRangesDoNotFollowBatchMongoDB: a server-side range is
// Options.ServerRange _ids (DefaultServerRange by default), not Batch,
// which sizes the client path's round trips; Rate caps it as it caps
// Batch. Each range is one pipeline update (servers that scan for an
// updateMany with an _id range pay that scan per range: see
// docs/performance.md).
func TestBackfillServerRangesDoNotFollowBatchMongoDB(t *testing.T) {
	for i, c := range []struct {
		name string
		opts backfill.Options
		want int // pipeline updates for 30 orders
	}{
		{"batch10", backfill.Options{Batch: 10}, 1},
		{"batch10_range12", backfill.Options{Batch: 10, ServerRange: 12}, 3},
		{"range12_rate100", backfill.Options{ServerRange: 12, Rate: 100}, 3},
		{"rate20", backfill.Options{Rate: 20}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &cmdlog.Recorder{}
			db := serverDB(t, fmt.Sprintf("mongomig_test_server_range_%d", i), rec)
			r := ordersRunner(t, db, ordersFS, 30)
			rec.Reset()
			res, err := backfill.Run(context.Background(), r, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c := res.Collections[0]; c.ServerSide != 30 || !c.Proven {
				t.Fatalf("result %+v; want 30 upgraded on the server, proven", c)
			}
			updates := 0
			for _, cmd := range rec.Named("update") {
				if cmd.Lookup("update").StringValue() == "orders" {
					updates += len(mustArray(t, cmd.Lookup("updates")))
				}
			}
			if updates != c.want {
				t.Errorf("%d pipeline updates, want %d", updates, c.want)
			}
		})
	}
}
