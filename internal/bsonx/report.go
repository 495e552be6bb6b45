package bsonx

import (
	"sort"

	"github.com/mongomig/mongomig/pkg/migration"
)

// VersionCount is how many documents sit at one document version.
type VersionCount struct {
	Version int64 `json:"version"`
	// Invalid holds the value found when the version field is not a whole
	// number (the document then counts nowhere else).
	Invalid ExtJSON `json:"invalid,omitempty"`
	Count   int64   `json:"count"`
}

// MaxValueExcerpt is how many characters of a document's value a report
// or a backfill failure quotes: values are the application's data, and a
// report is shared.
const MaxValueExcerpt = 20

// Excerpt cuts s to n characters, marking the cut.
func Excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// CollectionsWithValidators lists, sorted, the collections whose validator
// ms declare.
func CollectionsWithValidators(ms []*migration.Migration) []string {
	seen := map[string]bool{}
	for _, m := range ms {
		for _, c := range m.Collections {
			if c.Validator != nil {
				seen[c.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
