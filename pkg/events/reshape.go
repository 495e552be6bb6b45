package events

import (
	"fmt"
	"time"
)

// What a migration's run-once operations (pkg/reshape) report.
type (
	// RunOpProgress: after every batch of run operation Index (0-based)
	// of migration Version; Moved counts the documents copied or elements
	// moved so far, in every run.
	RunOpProgress struct {
		Version int64
		Index   int
		Op      string
		Pass    int
		Moved   int64
		Elapsed time.Duration
	}
	// RunOpDone: run operation Index of migration Version finished.
	RunOpDone struct {
		Version int64
		Index   int
		Summary string
	}
)

func (RunOpProgress) Kind() string       { return "run.progress" }
func (RunOpDone) Kind() string           { return "run.done" }
func (RunOpProgress) Severity() Severity { return Info }
func (RunOpDone) Severity() Severity     { return Notice }
func (e RunOpProgress) String() string {
	return fmt.Sprintf("migration %d, run operation %d (%s): pass %d, %d moved", e.Version, e.Index+1, e.Op, e.Pass, e.Moved)
}
func (e RunOpDone) String() string {
	return fmt.Sprintf("migration %d, run operation %d: %s", e.Version, e.Index+1, e.Summary)
}
