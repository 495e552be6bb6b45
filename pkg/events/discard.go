package events

import "fmt"

// BackfillDiscards: before writing, a backfill counted what a step the
// file allows to discard stored data (`discard: true`, or the data kept by
// an earlier step) will discard from Collection's documents below
// Migration's version. Summary words the count ("removes 47 non-empty
// comments arrays, 3,434 elements").
type BackfillDiscards struct {
	Collection string
	Migration  int64
	File       string
	Line       int
	Op, Path   string
	Summary    string
}

func (BackfillDiscards) Kind() string       { return "backfill.discards" }
func (BackfillDiscards) Severity() Severity { return Notice }
func (e BackfillDiscards) String() string {
	return fmt.Sprintf("%s: %s:%d: %s %s %s, as the file allows", e.Collection, e.File, e.Line, e.Op, e.Path, e.Summary)
}
