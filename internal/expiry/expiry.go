// Package expiry deletes the expired backlog of a TTL index. A new TTL
// index on a collection that holds documents already past their expiry
// deletes them all in the TTL monitor's next passes, a load MongoDB's
// documentation warns of; so does lowering expireAfterSeconds. Before up
// builds (or lowers) such an index, pkg/runner has this package delete
// that backlog itself: the plan counts it (a deleteExpired step before
// the createIndexes or collMod, [Job.Command]), and up deletes it in
// batches with a pause between them ([Job.Run]), under the migration
// lock. It sends only finds and deletes, like a backfill; the index is
// the runner's to send. internal/lifecycle decides which index expires
// documents and the filter that selects them; internal/state keeps the
// progress.
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
//  3. Each delete is fenced by the lease the context carries (the
//     migration lock), and the progress (deleted, batches) saved after
//     it: a run killed between the two counts that batch again as zero
//     on resume (the documents are gone), so Deleted never counts a
//     document twice but may miss a batch's count when killed right
//     after its delete.
//  4. Done is stored once a read finds nothing: a resumed up skips it.
//
// It never prints: each batch is an events.ExpiredDeleted entry.
package expiry

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Defaults of the backlog deletion.
const (
	DefaultBatch = 1000
	DefaultPause = 100 * time.Millisecond
)

// Job deletes the expired backlogs of one database's TTL indexes.
type Job struct {
	DB *mongo.Database
	// State keeps each deletion's progress.
	State *state.Store
	// Migrations are the loaded migrations: the index a deletion reads is
	// the one they declare.
	Migrations []*migration.Migration
	// Batch is how many documents one delete removes (at least 1); Pause
	// the pause between two deletes (0: none).
	Batch int
	Pause time.Duration
	Log   events.Logger
	// Hook, when not nil, runs at "expire.read" and "expire.batch" (tests
	// pause or kill a run there).
	Hook func(point string, version int64, i int)
}

// Command is the deletion of coll's documents that idx would expire at
// once, counted now, or nil when there is none (or idx is not a
// single-field TTL index, which the TTL monitor ignores).
func (j *Job) Command(ctx context.Context, version int64, coll string, idx migration.Index) (*cmddoc.Command, error) {
	if !lifecycle.Expires(idx) {
		return nil, nil
	}
	cutoff, err := j.cutoff(ctx, version, coll, idx)
	if err != nil {
		return nil, err
	}
	n, err := j.DB.Collection(coll).CountDocuments(ctx, lifecycle.ExpiryFilter(idx, cutoff))
	if err != nil {
		return nil, fmt.Errorf("count the expired documents of %s (index %s): %w", coll, idx.Name, err)
	}
	if n == 0 {
		return nil, nil
	}
	cmd := cmddoc.New(coll, lifecycle.CommandDeleteExpired, idx.Name, lifecycle.ExpiryDoc(coll, idx, cutoff, j.Batch))
	cmd.Documents = &n
	cmd.Cost = lifecycle.ExpiryCost(n, idx, j.Batch)
	return &cmd, nil
}

// cutoff is the stored cutoff of a deletion already begun, else the
// server's time minus expireAfterSeconds.
func (j *Job) cutoff(ctx context.Context, version int64, coll string, idx migration.Index) (time.Time, error) {
	p, err := j.State.ExpiryProgressOf(ctx, version, coll, idx.Name)
	if err != nil {
		return time.Time{}, err
	}
	if p.Started() {
		return p.Cutoff, nil
	}
	now, err := lease.ServerTime(ctx, j.DB)
	if err != nil {
		return time.Time{}, err
	}
	return lifecycle.ExpiryCutoff(now, idx), nil
}

// Run runs a deleteExpired step of migration version (see the protocol
// above). It stops between batches when ctx ends.
func (j *Job) Run(ctx context.Context, version int64, c cmddoc.Command) (cmddoc.CommandResult, error) {
	idx, ok := j.expiringIndex(version, c)
	if !ok {
		return cmddoc.CommandResult{}, fmt.Errorf("deleteExpired %s: migration %d declares no TTL index %s", c.Collection, version, c.Index)
	}
	p, err := j.State.ExpiryProgressOf(ctx, version, c.Collection, c.Index)
	if err != nil {
		return cmddoc.CommandResult{}, err
	}
	if p.Done {
		return cmddoc.CommandResult{Command: c, Outcome: cmddoc.OutcomeSkipped, Note: fmt.Sprintf("%s deleted by an earlier run", lifecycle.Documents(p.Deleted))}, nil
	}
	if !p.Started() {
		if p.Cutoff, err = j.cutoff(ctx, version, c.Collection, idx); err != nil {
			return cmddoc.CommandResult{}, err
		}
		if err := j.State.SaveExpiryProgress(ctx, &p); err != nil {
			return cmddoc.CommandResult{}, err
		}
	}
	filter := lifecycle.ExpiryFilter(idx, p.Cutoff)
	for {
		done, err := j.batch(ctx, version, c, filter, &p)
		if err != nil {
			return cmddoc.CommandResult{}, err
		}
		if done {
			return cmddoc.CommandResult{Command: c, Outcome: cmddoc.OutcomeOK, Note: fmt.Sprintf("deleted %s in %s before building %s", lifecycle.Documents(p.Deleted), lifecycle.Batches(p.Batches), c.Index)}, nil
		}
		if err := sleepCtx(ctx, j.Pause); err != nil {
			return cmddoc.CommandResult{}, err
		}
	}
}

// batch reads up to a batch of expired _ids and deletes them (fenced),
// saving the progress after the delete; done: the read found nothing,
// and Done is stored.
func (j *Job) batch(ctx context.Context, version int64, c cmddoc.Command, filter bson.D, p *state.ExpiryProgress) (done bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	coll := j.DB.Collection(c.Collection)
	find := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(j.Batch)).SetProjection(bson.D{{Key: "_id", Value: 1}})
	cur, err := coll.Find(ctx, filter, find)
	if err != nil {
		return false, fmt.Errorf("read expired documents of %s: %w", c.Collection, err)
	}
	var ids []struct {
		ID any `bson:"_id"`
	}
	if err := cur.All(ctx, &ids); err != nil {
		return false, fmt.Errorf("read expired documents of %s: %w", c.Collection, err)
	}
	if len(ids) == 0 {
		p.Done = true
		return true, j.State.SaveExpiryProgress(ctx, p)
	}
	in := make(bson.A, len(ids))
	for i, x := range ids {
		in[i] = x.ID
	}
	j.hook("expire.read", version, int(p.Batches))
	if err := lease.Fence(ctx); err != nil {
		return false, err
	}
	res, err := coll.DeleteMany(ctx, bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in}}}}, filter}}})
	if err != nil {
		return false, fmt.Errorf("delete expired documents of %s: %w", c.Collection, err)
	}
	p.Deleted += res.DeletedCount
	p.Batches++
	if err := j.State.SaveExpiryProgress(ctx, p); err != nil {
		return false, err
	}
	j.Log.Log(events.ExpiredDeleted{Version: version, Collection: c.Collection, Index: c.Index, Deleted: res.DeletedCount, Total: p.Deleted, Batch: p.Batches})
	j.hook("expire.batch", version, int(p.Batches))
	return false, nil
}

func (j *Job) hook(point string, version int64, i int) {
	if j.Hook != nil {
		j.Hook(point, version, i)
	}
}

// expiringIndex is the TTL index migration version declares under c's
// name, as the deletion must read it (created, rebuilt or changed).
func (j *Job) expiringIndex(version int64, c cmddoc.Command) (migration.Index, bool) {
	var m *migration.Migration
	for _, x := range j.Migrations {
		if x.Version == version {
			m = x
		}
	}
	if m == nil || m.Collection(c.Collection) == nil {
		return migration.Index{}, false
	}
	idx, ok := migration.IndexStateBefore(j.Migrations, c.Collection, c.Index, version+1)
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
