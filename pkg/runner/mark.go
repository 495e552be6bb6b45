package runner

// Marks: the escape hatch. [Runner.Mark] records a migration as applied,
// or removes its record, without sending anything to the collections: for
// a migration whose commands were run by hand, or a server that can no
// longer repeat one (an orphaned index after a crash), where `up` would
// fail on every run. The marks log and its invariants are
// internal/ledger's (marks.go there).

import (
	"context"
	"strings"

	"github.com/mongomig/mongomig/internal/ledger"
)

type (
	// Mark is one recorded mark: migration Version recorded as applied (or
	// not) by hand, with the reason given.
	Mark = ledger.Mark
	// MarkError is a mark refused before anything was written.
	MarkError = ledger.MarkError
)

// ErrNoReason is Mark called without a reason.
var ErrNoReason = ledger.ErrNoReason

// Mark records migration v as applied (applied true: a ledger entry with
// the file's checksums, as if up had applied it) or as not applied (its
// ledger entry removed), under the migration lock, sending nothing to the
// migrated collections; reason is kept with the mark. It refuses, with a
// [*MarkError], a migration already in that state, one without a file
// (applied), and a mark that would leave a pending file below an applied
// one.
func (r *Runner) Mark(ctx context.Context, v int64, applied bool, reason string) (*Mark, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, ErrNoReason
	}
	var mk *Mark
	err := r.withLock(withCommand(ctx, "mark"), lockID, func(ctx context.Context) error {
		var err error
		mk, err = r.ledger.MarkAs(ctx, r.migrations, v, applied, reason, r.cfg.owner, r.cfg.toolVersion)
		return err
	})
	if err != nil {
		return nil, err
	}
	return mk, nil
}

// Marks lists the marks recorded, oldest first.
func (r *Runner) Marks(ctx context.Context) ([]Mark, error) { return r.ledger.Marks(ctx) }
