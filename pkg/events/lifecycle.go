package events

import "fmt"

// ExpiredDeleted: a batch of an expired backlog's deletion, which up runs
// before it builds (or lowers) a TTL index so that the index does not
// delete the whole backlog at once.
type ExpiredDeleted struct {
	Version    int64
	Collection string
	Index      string
	// Deleted is what this batch deleted; Total what the deletion did so
	// far (across resumed runs); Batch counts the batches.
	Deleted, Total, Batch int64
}

func (ExpiredDeleted) Kind() string       { return "expiry.batch" }
func (ExpiredDeleted) Severity() Severity { return Info }
func (e ExpiredDeleted) String() string {
	return fmt.Sprintf("%s: deleted %d expired documents before building %s (batch %d, %d in all)", e.Collection, e.Deleted, e.Index, e.Batch, e.Total)
}
