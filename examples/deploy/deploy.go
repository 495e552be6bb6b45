// Package deploy applies an application's migrations from Go, as goose's
// provider does: for a service that migrates at start-up, or a deploy job
// built into the application's own binary, instead of running the mongomig
// command. It uses the same embedded files and Go functions as the
// application's lazy upgrades (package lazyapp).
//
// docs/lazy-upgrades.md quotes this package; its test runs it against the
// embedded sandbox.
package deploy

import (
	"context"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/examples/lazyapp"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

// Migrate applies every pending migration of the application to db and
// returns what it applied: nothing, and no error, when nothing is pending.
// Many replicas may call it at once: one takes the migration lock and
// applies, the others wait for the lock, then find nothing pending.
func Migrate(ctx context.Context, db *mongo.Database, log *slog.Logger) ([]runner.Applied, error) {
	files, err := lazyapp.Migrations()
	if err != nil {
		return nil, err
	}
	r, err := runner.New(db, files,
		runner.WithVersionOptions(lazyapp.RegistryOptions()...),
		runner.WithLockWait(2*time.Minute),
		runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
			attrs := []any{"event", e.Kind(), "severity", e.Severity().String()}
			switch e := e.(type) {
			case events.MigrationStarted:
				attrs = append(attrs, "version", e.Version)
			case events.MigrationDone:
				attrs = append(attrs, "version", e.Version, "took", e.Took)
			}
			log.Info(e.String(), attrs...)
		})),
	)
	if err != nil {
		return nil, err // *runner.InvalidFilesError: each problem at file:line:column
	}
	res, err := r.Up(ctx)   // a *runner.PartialError says what was applied and how to recover
	return res.Applied, err // res.Tightened: the validator windows it closed
}
