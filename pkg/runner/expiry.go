package runner

// The expired backlog of a TTL index is internal/expiry's (its package
// documentation states the protocol): before up builds (or lowers) a TTL
// index on a collection holding documents already past their expiry, the
// plan counts them (a deleteExpired step before the createIndexes or
// collMod) and up deletes them in batches (WithExpiryBatch) with a pause
// between them (WithExpiryPause), under the migration lock.

import (
	"fmt"
	"time"

	"github.com/mongomig/mongomig/internal/expiry"
	"github.com/mongomig/mongomig/internal/lifecycle"
)

// CommandDeleteExpired names the deletion of an expired backlog in a
// plan: not one server command but batches of find and delete.
const CommandDeleteExpired = lifecycle.CommandDeleteExpired

// Defaults of the backlog deletion.
const (
	DefaultExpiryBatch = expiry.DefaultBatch
	DefaultExpiryPause = expiry.DefaultPause
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

// expiry is the deletion job of the runner's database, batch and pause
// as configured.
func (r *Runner) expiry() *expiry.Job {
	j := &expiry.Job{DB: r.db, State: r.state, Migrations: r.migrations, Batch: r.cfg.expiryBatch, Pause: r.cfg.expiryPause, Log: r.cfg.log, Hook: r.hook}
	if j.Batch == 0 {
		j.Batch = DefaultExpiryBatch
		if j.Pause == 0 {
			j.Pause = DefaultExpiryPause
		}
	}
	return j
}
