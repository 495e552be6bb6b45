package runner

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// SetHook lets tests run code (such as killing the process) at points of a
// run: "command" after each command, "recorded" after each ledger entry.
func SetHook(r *Runner, fn func(point string, version int64, i int)) { r.hook = fn }

// UpgradeModels exposes the backfill's per-batch client work to
// benchmarks: docs are raws decoded (raws may be nil).
func UpgradeModels(r *Runner, coll string, raws []bson.Raw, docs []bson.D) []mongo.WriteModel {
	models, _ := r.upgradeModels(coll, docs, raws, map[string]*FailureGroup{}, false)
	return models
}

// WithTransactions ties ledger writes to the lock by a transaction without
// asking the server: on the sandbox, which refuses startTransaction, it
// shows the commands the transactional path sends.
func WithTransactions() Option {
	return optionFunc(func(c *config) error { c.forceTransactions = true; return nil })
}

// WithRangesPerWorker sets how many ranges per worker a parallel backfill
// splits into.
func WithRangesPerWorker(opts BackfillOptions, k int) BackfillOptions {
	opts.rangesPerWorker = k
	return opts
}
