package version

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// RunFunc is a Go run-once operation (`run: [{go: {name: ...}}]`): it
// receives the database and runs once, by `up` (or, registered as a
// file's `down:`, by `down`), under the migration lock ctx carries
// (lease.Fence(ctx) tells whether it is still held). A run interrupted
// before it returned runs again whole: write it to be idempotent.
type RunFunc func(ctx context.Context, db *mongo.Database) error

// WithRunFunc registers a Go run-once operation under name, for a team's
// own binary (pkg/command), as [WithFunc] registers a func step.
func WithRunFunc(name string, fn RunFunc) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return fmt.Errorf("run func %q is nil", name)
		}
		if name == "" {
			return fmt.Errorf("a run func needs a name")
		}
		if _, dup := c.runFuncs[name]; dup {
			return fmt.Errorf("run func %q is registered twice", name)
		}
		if c.runFuncs == nil {
			c.runFuncs = map[string]RunFunc{}
		}
		c.runFuncs[name] = fn
		return nil
	})
}

// RunFunc returns the Go run-once operation registered under name.
func (r *Registry) RunFunc(name string) (RunFunc, bool) {
	fn, ok := r.runFuncs[name]
	return fn, ok
}
