package report

import (
	"context"
	"slices"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// dryRunDiscards counts, for every step of the pending migrations that can
// discard stored data ([migration.Discards]), what it would discard from
// the documents below its migration's version (version.CountDiscard: on
// the server where it can, client-side otherwise). Only collections holds
// the report to those collections (empty: all).
func (r *Reporter) dryRunDiscards(ctx context.Context, pending []*migration.Migration, only []string) ([]version.DiscardCount, error) {
	var out []version.DiscardCount
	for _, m := range pending {
		for _, d := range migration.Discards(m) {
			if len(only) > 0 && !slices.Contains(only, d.Collection) {
				continue
			}
			c, err := r.registry.CountDiscard(ctx, r.db.Collection(d.Collection), d)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}
