package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
)

// UndeclaredCollection is a collection (or view) of the database that no
// migration file declares, is mongomig's own, or a member of a family.
type UndeclaredCollection struct {
	Name string `json:"name"`
	// Type is listCollections' type: "collection", "view" or
	// "timeseries".
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Listed is a collection as listCollections names it.
type Listed struct{ Name, Type string }

// Undeclared are the listed collections no migration of migrations
// declares (under collections: or views:, or as a run-once operation's
// collection), other than mongomig's own (mongomig_*, and own: the
// ledger and lock collections whatever their configured names), the
// server's (system.*), and the members of the families the files
// declare; by name.
func Undeclared(migrations []*migration.Migration, own []string, listed []Listed) []UndeclaredCollection {
	declared := map[string]bool{}
	for _, n := range own {
		declared[n] = true
	}
	for _, m := range migrations {
		for _, c := range m.Collections {
			declared[c.Name] = true
		}
		for _, v := range m.Views {
			declared[v.Name] = true
		}
		for _, op := range m.Run {
			for _, c := range op.Collections() {
				declared[c] = true
			}
		}
	}
	fams := migration.Families(migrations, func(int64) bool { return true })
	out := []UndeclaredCollection{}
	for _, s := range listed {
		n := s.Name
		if declared[n] || strings.HasPrefix(n, "mongomig_") || strings.HasPrefix(n, "system.") || migration.IsMember(fams, n) {
			continue
		}
		typ := s.Type
		if typ == "" {
			typ = "collection"
		}
		out = append(out, UndeclaredCollection{Name: n, Type: typ,
			Message: fmt.Sprintf("%s: a %s no migration declares (left as it is: mongomig never drops what no migration names)", n, typ)})
	}
	slices.SortFunc(out, func(a, b UndeclaredCollection) int { return strings.Compare(a.Name, b.Name) })
	return out
}
