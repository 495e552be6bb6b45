package cli

import (
	"github.com/mongomig/mongomig/pkg/migration"
)

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
