package runner

import "time"

// WithBucketsAt makes up (and status) bring the bucket families to at
// instead of the server's clock.
func WithBucketsAt(at time.Time) Option {
	return optionFunc(func(c *config) error { c.bucketsAt = at; return nil })
}
