package runner

import (
	"context"

	"github.com/mongomig/mongomig/pkg/lint"
)

// NewCollection is a collection a pending migration declares that no
// earlier migration declares and the database lacks ([lint.NewCollection]).
type NewCollection = lint.NewCollection

// NewCollections lists the collections the pending migrations up to to
// would create (see [NewCollection]), in version and file order. It reads
// listCollections and sends nothing else.
func (r *Runner) NewCollections(ctx context.Context, to int64) ([]NewCollection, error) {
	pending, err := r.pending(ctx, to)
	if err != nil || len(pending) == 0 {
		return nil, err
	}
	have, err := r.existing(ctx)
	if err != nil {
		return nil, err
	}
	return lint.NewCollections(r.migrations, pending, have), nil
}
