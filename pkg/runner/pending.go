package runner

import (
	"context"

	"github.com/mongomig/mongomig/pkg/migration"
)

// Pending lists, in version order, the migrations up to version to
// ([Latest]: all) that the ledger does not record, as [Runner.UpTo] would
// apply them (pkg/report's dry run reads them). It refuses what Up
// refuses before sending anything: applied files that were edited or
// removed ([DriftError], unless [WithAllowDrift]), a pending migration
// numbered below an applied one ([OrderError]) and a pending migration
// that declares nothing ([InvalidFilesError]).
func (r *Runner) Pending(ctx context.Context, to int64) ([]*migration.Migration, error) {
	return r.pending(ctx, to)
}
