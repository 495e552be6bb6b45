package runner

// What status shows of the database beyond the migrated collections: the
// lifecycle each collection holds, the time-bucketed families with their
// members and what the next buckets run would create or drop, and the
// collections no migration declares (reported, never dropped). Reading
// them is internal/lifecycleplan's (status.go); status only reads.

import (
	"context"
	"time"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
)

type (
	// UndeclaredCollection is a collection (or view) of the database that
	// no migration file declares, is mongomig's own, or a member of a family.
	UndeclaredCollection = lifecycle.UndeclaredCollection
	// CollectionLifecycle is one collection's (or view's) lifecycle state
	// as the server holds it.
	CollectionLifecycle = lifecycleplan.CollectionLifecycle
	// LifecycleIndex is a TTL or hidden index as listIndexes shows it.
	LifecycleIndex = lifecycleplan.LifecycleIndex
)

// lifecycleStatus sets st.Lifecycle, st.Buckets and st.Undeclared.
func (r *Runner) lifecycleStatus(ctx context.Context, st *Status) error {
	var err error
	if st.Lifecycle, err = r.planner().Lifecycle(ctx, st.Current); err != nil {
		return err
	}
	run, err := r.planBuckets(ctx, time.Time{}, func(v int64) bool { _, ok := st.applied[v]; return ok }, false)
	if err != nil {
		return err
	}
	if run != nil {
		st.Buckets = run.Families
	}
	st.Undeclared, err = r.planner().Undeclared(ctx, []string{r.cfg.ledger, r.cfg.lock})
	return err
}
