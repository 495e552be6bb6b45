package runner_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// A *Runner is documented safe for concurrent use (doc.go): the server
// capabilities it probes lazily (validators, lifecycle features,
// validation settings) are kept without a data race when several
// goroutines plan at once, on the server of MONGOMIG_TEST_URI (the
// sandbox answers no validator probe). Run with -race (make test-server2
// does) it fails on a runner that caches a probe by writing its
// configuration.
func TestRunnerConcurrentPlansMongoDB(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(t, "mongomig_test_concurrent", "no second server to probe validators on concurrently")
	fsys, refused := fixtures.EnforceableSamples(t, db)
	r := newRunner(t, db, fsys, runner.WithClientSideValidators(slices.Sorted(maps.Keys(refused))...))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Plan(ctx, 3)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("plan %d: %v", i, err)
		}
	}
}
