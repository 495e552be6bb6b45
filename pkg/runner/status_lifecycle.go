package runner

// What status shows of the database beyond the migrated collections: the
// time-bucketed families with their members and what the next buckets
// run would create or drop, and the collections no migration declares
// (reported, never dropped). Status only reads.

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycle"
)

// UndeclaredCollection is a collection (or view) of the database that no
// migration file declares, is mongomig's own, or a member of a family.
type UndeclaredCollection = lifecycle.UndeclaredCollection

// lifecycleStatus sets st.Buckets, st.Lifecycle and st.Undeclared.
func (r *Runner) lifecycleStatus(ctx context.Context, st *Status) error {
	var err error
	if st.Lifecycle, err = r.collectionLifecycle(ctx, st.Current); err != nil { // status_lifecycle_colls.go
		return err
	}
	run, err := r.planBucketsRead(ctx, time.Time{}, func(v int64) bool { _, ok := st.applied[v]; return ok })
	if err != nil {
		return err
	}
	if run != nil {
		st.Buckets = run.Families
	}
	st.Undeclared, err = r.undeclared(ctx)
	return err
}

// undeclared lists the database's collections no migration file declares
// (under collections:, or as a run-once operation's collection), other
// than mongomig's own (mongomig_*, and the ledger and lock collections
// whatever their configured names), the server's (system.*), and the
// members of the families the files declare.
func (r *Runner) undeclared(ctx context.Context) ([]UndeclaredCollection, error) {
	specs, err := r.db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	listed := make([]lifecycle.Listed, len(specs))
	for i, sp := range specs {
		listed[i] = lifecycle.Listed{Name: sp.Name, Type: sp.Type}
	}
	return lifecycle.Undeclared(r.migrations, []string{r.cfg.ledger, r.cfg.lock}, listed), nil
}
