package backfill

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/events"
)

// SetHook lets tests run code at the backfill's points ("backfill.read",
// "backfill.batch", "backfill.unit") of a run with src as its source.
func SetHook(src Source, fn func(point string, version int64, i int)) {
	testhook.Set(src, fn)
}

// UpgradeModels exposes the backfill's per-batch client work to
// benchmarks: docs are raws decoded (raws may be nil).
func UpgradeModels(src Source, coll string, raws []bson.Raw, docs []bson.D) []mongo.WriteModel {
	models, _ := newBackfiller(src).upgradeModels(coll, docs, raws, map[string]*FailureGroup{}, guards{})
	return models
}

// WithRangesPerWorker sets how many ranges per worker a parallel backfill
// splits into.
func WithRangesPerWorker(opts Options, k int) Options {
	opts.rangesPerWorker = k
	return opts
}

// WithProgress has the backfill call fn after every batch instead of
// logging an events.BackfillBatch.
func WithProgress(opts Options, fn func(events.BackfillBatch)) Options {
	opts.Progress, opts.progress = true, fn
	return opts
}

// WithSerialReads makes the server-side path read each range after the
// previous range's update (no overlap), and WithPerFieldGuards the client
// path guard field by field where version.WholeFilter would do: the
// benchmarks' like-with-like.
func WithSerialReads(o Options) Options { o.serial = true; return o }

func WithPerFieldGuards(o Options) Options { o.perField = true; return o }
