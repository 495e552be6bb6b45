package runner

// The expired backlog of a TTL index. A new TTL index on a collection
// that holds documents already past their expiry deletes them all in the
// TTL monitor's next passes, a load MongoDB's documentation warns of; so
// does lowering expireAfterSeconds. Before up builds (or lowers) such an
// index, it deletes that backlog itself: the plan counts it (a
// deleteExpired step before the createIndexes or collMod), and up deletes
// it in batches (WithExpiryBatch) with a pause between them
// (WithExpiryPause), under the migration lock.
//
// The protocol (progress kept by internal/state, "$expire$..."):
//
//  1. The cutoff (the server's time minus expireAfterSeconds) is fixed
//     by the first batch and stored before any delete; a resumed run
//     deletes what that cutoff names, never more.
//  2. Each batch reads up to the batch size of _ids matching the expiry
//     filter (the index's field a date before the cutoff, and its
//     partialFilterExpression, as the TTL monitor selects them:
//     src/mongo/db/ttl/ttl.cpp), then deletes {_id: {$in: ids}} AND the
//     same filter: a document an application refreshed between the read
//     and the delete no longer matches and stays. No document outside
//     the filter is ever deleted; every deleted one the TTL index would
//     have deleted at once.
//  3. Each delete is fenced by the migration lock, and the progress
//     (deleted, batches) saved after it: a run killed between the two
//     counts that batch again as zero on resume (the documents are
//     gone), so Deleted never counts a document twice but may miss a
//     batch's count when killed right after its delete.
//  4. Done is stored once a read finds nothing: a resumed up skips it.

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// CommandDeleteExpired names the deletion of an expired backlog in a
// plan: not one server command but batches of find and delete.
const CommandDeleteExpired = lifecycle.CommandDeleteExpired

// Defaults of the backlog deletion.
const (
	DefaultExpiryBatch = 1000
	DefaultExpiryPause = 100 * time.Millisecond
)

// WithExpiryBatch sets how many expired documents one delete removes
// (default 1000, at least 1).
func WithExpiryBatch(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("expiry batch %d is below 1", n)
		}
		c.expiryBatch = n
		return nil
	})
}

// WithExpiryPause sets the pause between two deletes of an expired
// backlog (default 100ms; 0: none).
func WithExpiryPause(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("expiry pause %v is negative", d)
		}
		c.expiryPause = d
		return nil
	})
}

func (r *Runner) expiryBatch() int {
	if r.cfg.expiryBatch == 0 {
		return DefaultExpiryBatch
	}
	return r.cfg.expiryBatch
}

func (r *Runner) expiryPause() time.Duration {
	if r.cfg.expiryBatch == 0 && r.cfg.expiryPause == 0 {
		return DefaultExpiryPause
	}
	return r.cfg.expiryPause
}

var (
	expiryFilter = lifecycle.ExpiryFilter
	documents    = lifecycle.Documents
	batches      = lifecycle.Batches
)

// expiryCommand is the deletion of coll's documents that idx would
// expire at once, counted now, or nil when there is none (or idx is not
// a single-field TTL index, which the TTL monitor ignores).
func (r *Runner) expiryCommand(ctx context.Context, version int64, coll string, idx migration.Index) (*Command, error) {
	if !lifecycle.Expires(idx) {
		return nil, nil
	}
	cutoff, err := r.expiryCutoff(ctx, version, coll, idx)
	if err != nil {
		return nil, err
	}
	n, err := r.db.Collection(coll).CountDocuments(ctx, expiryFilter(idx, cutoff))
	if err != nil {
		return nil, fmt.Errorf("count the expired documents of %s (index %s): %w", coll, idx.Name, err)
	}
	if n == 0 {
		return nil, nil
	}
	cmd := newCommand(coll, CommandDeleteExpired, idx.Name, lifecycle.ExpiryDoc(coll, idx, cutoff, r.expiryBatch()))
	cmd.Documents = &n
	cmd.Cost = lifecycle.ExpiryCost(n, idx, r.expiryBatch())
	return &cmd, nil
}

// expiryCutoff is the stored cutoff of a deletion already begun, else the
// server's time minus expireAfterSeconds.
func (r *Runner) expiryCutoff(ctx context.Context, version int64, coll string, idx migration.Index) (time.Time, error) {
	p, err := r.state.ExpiryProgressOf(ctx, version, coll, idx.Name)
	if err != nil {
		return time.Time{}, err
	}
	if p.Started() {
		return p.Cutoff, nil
	}
	now, err := lease.ServerTime(ctx, r.db)
	if err != nil {
		return time.Time{}, err
	}
	return lifecycle.ExpiryCutoff(now, idx), nil
}

// deleteExpired runs a deleteExpired step (see the protocol above). It
// stops between batches when ctx ends.
func (r *Runner) deleteExpired(ctx context.Context, version int64, c Command) (CommandResult, error) {
	idx, ok := r.expiringIndex(version, c)
	if !ok {
		return CommandResult{}, fmt.Errorf("deleteExpired %s: migration %d declares no TTL index %s", c.Collection, version, c.Index)
	}
	p, err := r.state.ExpiryProgressOf(ctx, version, c.Collection, c.Index)
	if err != nil {
		return CommandResult{}, err
	}
	if p.Done {
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: fmt.Sprintf("%s deleted by an earlier run", documents(p.Deleted))}, nil
	}
	if !p.Started() {
		if p.Cutoff, err = r.expiryCutoff(ctx, version, c.Collection, idx); err != nil {
			return CommandResult{}, err
		}
		if err := r.state.SaveExpiryProgress(ctx, &p); err != nil {
			return CommandResult{}, err
		}
	}
	coll := r.db.Collection(c.Collection)
	filter := expiryFilter(idx, p.Cutoff)
	find := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(r.expiryBatch())).SetProjection(bson.D{{Key: "_id", Value: 1}})
	for {
		if err := ctx.Err(); err != nil {
			return CommandResult{}, err
		}
		cur, err := coll.Find(ctx, filter, find)
		if err != nil {
			return CommandResult{}, fmt.Errorf("read expired documents of %s: %w", c.Collection, err)
		}
		var ids []struct {
			ID any `bson:"_id"`
		}
		if err := cur.All(ctx, &ids); err != nil {
			return CommandResult{}, fmt.Errorf("read expired documents of %s: %w", c.Collection, err)
		}
		if len(ids) == 0 {
			p.Done = true
			if err := r.state.SaveExpiryProgress(ctx, &p); err != nil {
				return CommandResult{}, err
			}
			return CommandResult{Command: c, Outcome: OutcomeOK, Note: fmt.Sprintf("deleted %s in %s before building %s", documents(p.Deleted), batches(p.Batches), c.Index)}, nil
		}
		in := make(bson.A, len(ids))
		for i, x := range ids {
			in[i] = x.ID
		}
		if r.hook != nil {
			r.hook("expire.read", version, int(p.Batches))
		}
		if err := fence(ctx); err != nil {
			return CommandResult{}, err
		}
		res, err := coll.DeleteMany(ctx, bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in}}}}, filter}}})
		if err != nil {
			return CommandResult{}, fmt.Errorf("delete expired documents of %s: %w", c.Collection, err)
		}
		p.Deleted += res.DeletedCount
		p.Batches++
		if err := r.state.SaveExpiryProgress(ctx, &p); err != nil {
			return CommandResult{}, err
		}
		r.cfg.log.Log(events.ExpiredDeleted{Version: version, Collection: c.Collection, Index: c.Index, Deleted: res.DeletedCount, Total: p.Deleted, Batch: p.Batches})
		if r.hook != nil {
			r.hook("expire.batch", version, int(p.Batches))
		}
		if err := sleepCtx(ctx, r.expiryPause()); err != nil {
			return CommandResult{}, err
		}
	}
}

// expiringIndex is the TTL index migration version declares under c's
// name, as the deletion must read it (created, rebuilt or changed).
func (r *Runner) expiringIndex(version int64, c Command) (migration.Index, bool) {
	m := r.migrationByVersion(version)
	if m == nil || m.Collection(c.Collection) == nil {
		return migration.Index{}, false
	}
	idx, ok := migration.IndexStateBefore(r.migrations, c.Collection, c.Index, version+1)
	return idx, ok && idx.ExpireAfterSeconds != nil && len(idx.Keys) == 1
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
