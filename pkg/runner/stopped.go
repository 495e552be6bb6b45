package runner

import (
	"github.com/mongomig/mongomig/internal/cmddoc"
	downgradewalk "github.com/mongomig/mongomig/internal/downgrade"
)

// RevertStoppedError is a revert that stopped part-way: the migration
// stays recorded as applied, and a later down resumes it.
type RevertStoppedError = cmddoc.RevertStoppedError

// PartwayError is a revert of File refused (nothing changed) because
// Count documents of Collection are partway through an interrupted
// server-side backfill: their Field holds a backfill's marker, and a
// backfill of Collection finishes them. It wraps [ErrPartway].
type PartwayError = downgradewalk.PartwayError
