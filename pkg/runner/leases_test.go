package runner_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// A lease names the command its holder runs, so status, unlock and a
// waiting process can say what holds it ("holder (host, pid,
// command)").
func TestLeaseNamesItsCommand(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	seen := map[string]string{} // command -> lease name, read while held
	var r *runner.Runner
	look := func(ev events.Entry) {
		if _, ok := ev.(events.MigrationStarted); !ok {
			return
		}
		leases, err := r.Leases(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		for _, l := range leases {
			seen[l.Command] = l.Name
		}
	}
	r = newRunner(t, db, samples(t), runner.WithLogger(events.LoggerFunc(look)))
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if seen["up"] != "mongomig" {
		t.Errorf("while up applied, the leases by command were %v, want up -> mongomig", seen)
	}
	clear(seen)
	if _, err := r.DownTo(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if seen["down"] != "mongomig" {
		t.Errorf("while down reverted, the leases by command were %v, want down -> mongomig", seen)
	}
	if leases, err := r.Leases(ctx); err != nil || len(leases) != 0 {
		t.Fatalf("after the runs: leases %v, %v; want none", leases, err)
	}
}
