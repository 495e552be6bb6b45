package runner

import "github.com/mongomig/mongomig/internal/testhook"

// SetHook lets tests run code (such as killing the process) at points of a
// run: "command" after each command, "recorded" after each ledger entry,
// and the backfill's points ("backfill.read", "backfill.batch",
// "backfill.unit") when a backfill runs with r as its source.
func SetHook(r *Runner, fn func(point string, version int64, i int)) {
	r.hook = fn
	testhook.Set(r, fn)
}

// WithTransactions ties ledger writes to the lock by a transaction without
// asking the server: on the sandbox, which refuses startTransaction, it
// shows the commands the transactional path sends.
func WithTransactions() Option {
	return optionFunc(func(c *config) error { c.forceTransactions = true; return nil })
}
