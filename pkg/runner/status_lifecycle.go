package runner

// What status shows of the database beyond the migrated collections: the
// time-bucketed families with their members and what the next buckets
// run would create or drop, and the collections no migration declares
// (reported, never dropped). Status only reads.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// UndeclaredCollection is a collection (or view) of the database that no
// migration file declares, is mongomig's own, or a member of a family.
type UndeclaredCollection struct {
	Name string `json:"name"`
	// Type is listCollections' type: "collection", "view" or
	// "timeseries".
	Type    string `json:"type"`
	Message string `json:"message"`
}

// lifecycleStatus sets st.Buckets and st.Undeclared.
func (r *Runner) lifecycleStatus(ctx context.Context, st *Status) error {
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
	declared := map[string]bool{r.cfg.ledger: true, r.cfg.lock: true}
	for _, m := range r.migrations {
		for _, c := range m.Collections {
			declared[c.Name] = true
		}
		for _, op := range m.Run {
			for _, c := range op.Collections() {
				declared[c] = true
			}
		}
	}
	fams := migration.Families(r.migrations, func(int64) bool { return true })
	out := []UndeclaredCollection{}
	for _, s := range specs {
		n := s.Name
		if declared[n] || strings.HasPrefix(n, "mongomig_") || strings.HasPrefix(n, "system.") || migration.IsMember(fams, n) {
			continue
		}
		typ := s.Type
		if typ == "" {
			typ = "collection"
		}
		out = append(out, UndeclaredCollection{Name: n, Type: typ,
			Message: fmt.Sprintf("%s: a %s no migration declares (left as it is: mongomig never drops what no migration names)", n, typ)})
	}
	slices.SortFunc(out, func(a, b UndeclaredCollection) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
