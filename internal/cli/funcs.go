package cli

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

// refuseMissingFuncs refuses, before anything is read, a report (validate,
// up --dry-run) on collections whose upgrades up to version upTo name a
// func step this binary does not register: it could only list every
// document below that step as failing. Like backfill's refusal it wraps
// [runner.ErrFuncMissing] (exit 2) and says how to get a binary that has
// the function.
func refuseMissingFuncs(r *runner.Runner, colls []string, upTo int64, command string) error {
	for _, c := range colls {
		for _, m := range r.Registry().MissingFuncs(c) {
			if m.Version > upTo {
				continue
			}
			return fmt.Errorf("%w: %s: %s declares `func: %s`, which this mongomig binary does not have, so %s cannot check the documents below version %d; "+
				"build your own with pkg/command and version.WithFunc(%q, ...) (see docs/lazy-upgrades.md), and run its %s; nothing was read",
				runner.ErrFuncMissing, c, m.File, m.Func, command, m.Version, m.Func, command)
		}
	}
	return nil
}

// reportedCollections lists the collections a report on ms reads: those
// with a validator and, when uniqueIndexes, those where ms create a unique
// index (up --dry-run predicts its build).
func reportedCollections(ms []*migration.Migration, uniqueIndexes bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for _, c := range m.Collections {
			read := c.Validator != nil
			for _, idx := range c.Indexes.Create {
				read = read || (uniqueIndexes && idx.Unique)
			}
			if read && !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	return out
}
