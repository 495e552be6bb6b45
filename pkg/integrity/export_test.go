package integrity

import "time"

// SetSaveEvery sets how often a repair saves its progress, for a test
// that stops one between two documents; it returns the old value.
func SetSaveEvery(d time.Duration) time.Duration {
	old := saveEvery
	saveEvery = d
	return old
}
