package lint

import (
	"fmt"
	"slices"

	"github.com/mongomig/mongomig/internal/suggest"
	"github.com/mongomig/mongomig/pkg/migration"
)

// lintCollectionNames warns of a collection that only one file declares
// while a name one typo away is declared by an earlier file or by two
// others (`user:` where the others say `users:`): applied, the migration
// would create a new collection instead of changing the one meant. Lint
// cannot see the database; up and its dry run also suggest against its
// collections.
func (r *Report) lintCollectionNames(ms []*migration.Migration) {
	for _, m := range ms {
		for _, c := range m.Collections {
			if declaredBy(ms, c.Name, m) > 0 {
				continue
			}
			w, ok := suggest.Name(c.Name, CollectionCandidates(ms, m))
			if !ok {
				continue
			}
			r.add(Problem{Severity: SeverityWarning, File: m.File, Line: c.Pos.Line, Column: c.Pos.Column, Collection: c.Name,
				Message: fmt.Sprintf("collection %q is declared by no other migration, and %q by %s", c.Name, w, countFiles(declaredBy(ms, w, m))),
				Hint:    fmt.Sprintf("did you mean %q? Applied, this file creates a new collection %q instead", w, c.Name)})
		}
	}
}

// CollectionCandidates are the names a collection of m that no other file
// declares may have been meant as: the collections of the files numbered
// below m, and those that at least two other files declare (a typo in
// the first file that declares a collection). Of two names one file each
// declares, only the later file's is suspect. Sorted, once each.
func CollectionCandidates(ms []*migration.Migration, m *migration.Migration) []string {
	var out []string
	for _, o := range ms {
		if o == m {
			continue
		}
		for _, c := range o.Collections {
			if o.Version < m.Version || declaredBy(ms, c.Name, m) >= 2 {
				out = append(out, c.Name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// declaredBy counts the files other than m that declare coll.
func declaredBy(ms []*migration.Migration, coll string, m *migration.Migration) int {
	n := 0
	for _, o := range ms {
		if o != m && o.Collection(coll) != nil {
			n++
		}
	}
	return n
}

func countFiles(n int) string {
	if n == 1 {
		return "another file"
	}
	return fmt.Sprintf("%d others", n)
}
