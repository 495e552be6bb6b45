package backfill

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Source is what a backfill needs from the migration runner;
// *runner.Runner satisfies it. A backfill never applies or reverts a
// migration: it reads the applied version (to refuse upgrading documents
// past what the running application knows, and to stop when a down
// reverts its target), takes leases through the runner's lock collection,
// and logs through the runner's logger.
type Source interface {
	Database() *mongo.Database
	Registry() *version.Registry
	Migrations() []*migration.Migration
	// AppliedVersion is the highest migration version the ledger records.
	AppliedVersion(ctx context.Context) (int64, error)
	// Acquire takes a lease of the lock collection (see lease.Acquirer).
	Acquire(ctx context.Context, name string, wait time.Duration) (lease.Locker, error)
	// LeaseDuration is how long a lease lives without a heartbeat.
	LeaseDuration() time.Duration
	// LockWait is how long to wait for a collection's backfill lease.
	LockWait() time.Duration
	Logger() events.Logger
}

// backfiller is one run of [Run] over src.
type backfiller struct {
	src        Source
	db         *mongo.Database
	registry   *version.Registry
	migrations []*migration.Migration
	store      *state.Store
	log        events.Logger
	leaseTime  time.Duration
	// hook, set only by tests (see internal/testhook), runs at points of
	// a run.
	hook testhook.Func
	// nonces are the collections' marker nonces (see markerTrusted).
	nonces nonces
	// mu guards noPipelines: a pipeline update was refused as such.
	mu          sync.Mutex
	noPipelines bool
	// whole is whether the server evaluates WholeFilter (see wholeGuards);
	// wholeKnown, whether that is known yet. Guarded by mu.
	whole, wholeKnown bool
}

func newBackfiller(src Source) *backfiller {
	db := src.Database()
	return &backfiller{src: src, db: db, registry: src.Registry(), migrations: src.Migrations(), store: state.New(db),
		log: src.Logger(), leaseTime: src.LeaseDuration(), hook: testhook.Get(src)}
}

// withLock runs fn holding lease name, waiting the runner's lock wait.
func (r *backfiller) withLock(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	return lease.With(ctx, r.src, name, r.src.LockWait(), fn)
}

// withLockWait runs fn holding lease name, waiting at most wait.
func (r *backfiller) withLockWait(ctx context.Context, name string, wait time.Duration, fn func(ctx context.Context) error) error {
	return lease.With(ctx, r.src, name, wait, fn)
}

// docVersionAt is the document version of coll once migration v is
// applied: the last migration up to v that declares an upgrade for it.
func (r *backfiller) docVersionAt(coll string, v int64) int64 {
	if r.registry.Current(coll) <= v {
		return r.registry.Current(coll)
	}
	return r.registry.Previous(coll, v+1)
}
