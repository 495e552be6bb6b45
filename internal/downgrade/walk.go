// Package downgrade rewrites the documents of a collection at one version
// with the version registry's downgrade: the document pass of `down`
// ([Pass]: the first passes, then the late one once the restored
// validator is in force). It checks what a revert downgrades before
// anything changes ([Check]: DowngradeError, PartwayError, a missing
// func), names the leases a down takes ([LeasesOf], of the collections
// it reverts, [Reverted]) and whether its guarded writes scan
// ([GuardScans]); pkg/runner decides the order (the validator window, the
// commands, the ledger) and runs the passes under the migration lock.
// What a revert reports of its documents (DocumentChange,
// DowngradedDocuments, carried by an interrupted revert's error: Stopped,
// Downgraded; BackfillRunningError when a backfill of a collection it
// reverts holds its lease) is here too.
//
// Invariants: every write is a guarded delta
// ([version.Registry.DowngradeDeltaFor]: the fields the downgrade writes
// and those it reads, at their values as read), so a concurrent write is
// never erased and fields the downgrade neither reads nor touches are
// never guarded or written; every bulk write is sent after a fence of the
// lease its context carries ([lease.Fence]); an interruption lets the
// batch in flight complete, so the documents counted are those on the
// server, and a lost lease stops it.
package downgrade

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/version"
)

// Batch is the number of guarded writes per bulk write (the sandbox hangs
// on update commands of 100 statements or more).
const Batch = 50

// Walk is the downgrade of the documents of Coll (called Name in the
// registry) at version Version.
type Walk struct {
	Coll     *mongo.Collection
	Name     string
	Version  int64
	Registry *version.Registry
	// Progress, when set, is called after every batch with the documents
	// it downgraded; BeforeWrite, when set, before every bulk write with
	// its size (tests stop a run there).
	Progress    func(n int64)
	BeforeWrite func(n int)
}

// Documents rewrites every document at w.Version in passes over a cursor
// in _id order, each as a guarded delta in unordered bulk writes. A
// document a concurrent writer changed since the read is left alone by
// that write, counted in reread and downgraded from its new value by the
// next pass. Passes go on until one finds no document at the version: a
// document written at it during a pass (the release being rolled back
// still runs) is downgraded by the next. A pass that downgrades nothing
// while documents remain stops with an error.
func (w Walk) Documents(ctx context.Context) (done, reread int64, err error) {
	for {
		n, left, err := w.pass(ctx)
		done += n
		if err != nil || n+left == 0 {
			return done, reread, err
		}
		if n == 0 {
			return done, reread, fmt.Errorf("%d documents keep changing under the downgrade; stop the writers and run down again", left)
		}
		reread += left
	}
}

// pass makes one pass; left counts the documents whose guarded write
// matched nothing (changed since they were read).
func (w Walk) pass(ctx context.Context) (done, left int64, err error) {
	c, coll, v := w.Coll, w.Name, w.Version
	// The guards on arrays the server needs (see version.Arrays).
	arrays, err := version.ArraysOf(ctx, c.Database().Client())
	if err != nil {
		return 0, 0, err
	}
	cur, err := c.Find(ctx, w.Registry.VersionIs(v), options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(Batch))
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var models []mongo.WriteModel
	flush := func() error {
		if len(models) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := lease.Fence(ctx); err != nil {
			return err
		}
		if w.BeforeWrite != nil {
			w.BeforeWrite(len(models))
		}
		// An interruption lets the batch complete, so done is exact.
		wctx, stop := batchContext(ctx)
		res, err := c.BulkWrite(wctx, models, options.BulkWrite().SetOrdered(false))
		stop()
		if err != nil {
			return fmt.Errorf("write downgraded documents: %w", err)
		}
		done += res.MatchedCount
		left += int64(len(models)) - res.MatchedCount
		models = models[:0]
		if w.Progress != nil {
			w.Progress(res.MatchedCount)
		}
		return nil
	}
	for cur.Next(ctx) {
		var d bson.D
		if err := cur.Decode(&d); err != nil {
			return done, left, err
		}
		out, err := w.Registry.Downgrade(coll, v, d)
		if err != nil {
			var ue *version.UpgradeError
			if errors.As(err, &ue) {
				return done, left, err // it names the document
			}
			raw, _ := bson.Marshal(d)
			return done, left, fmt.Errorf("downgrade %s document _id=%s: %w", coll, bsonx.IDOf(raw), err)
		}
		delta, err := w.Registry.DowngradeDeltaForOn(coll, d, out, v, arrays)
		if err != nil {
			return done, left, err
		}
		models = append(models, mongo.NewUpdateOneModel().SetFilter(delta.Filter).SetUpdate(delta.Update))
		if len(models) == Batch {
			if err := flush(); err != nil {
				return done, left, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return done, left, err
	}
	return done, left, flush()
}

// batchContext is the context of one batch of down's writes: an
// interruption (ctx cancelled for any cause but a lost lease) lets it
// complete, so the documents counted as downgraded are those on the
// server; a lost lease stops it.
func batchContext(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); errors.Is(cause, lease.ErrLost) {
			cancel(cause)
		}
	})
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), lease.ErrLost) {
		cancel(context.Cause(ctx))
	}
	return wctx, func() { unhook(); cancel(nil) }
}
