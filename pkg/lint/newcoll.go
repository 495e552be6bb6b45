package lint

import (
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
)

// NewCollection is a collection a pending migration declares that no
// earlier migration declares and the database lacks: up creates it. A
// typo (`user:` where the others say `users:`) looks like this, so the
// CLI warns with a did-you-mean against Declared and Existing.
type NewCollection struct {
	Collection string        `json:"collection"`
	Version    int64         `json:"version"`
	File       string        `json:"file"`
	Pos        migration.Pos `json:"pos"`
	// Declared are the names the other files make it a likely typo of
	// ([CollectionCandidates]: the collections of earlier files, and
	// those two other files declare); Existing those the database has
	// (mongomig's own and system.* aside). Both sorted, without Collection.
	Declared []string `json:"declared"`
	Existing []string `json:"existing"`
}

// NewCollections lists the collections pending, the migrations of ms up
// would apply, would create (see [NewCollection]), in version and file
// order; have are the collections the database has.
func NewCollections(ms, pending []*migration.Migration, have map[string]bool) []NewCollection {
	var existing []string
	for n := range have {
		if !strings.HasPrefix(n, "mongomig_") && !strings.HasPrefix(n, "system.") {
			existing = append(existing, n)
		}
	}
	slices.Sort(existing)
	var out []NewCollection
	for _, m := range pending {
		for _, c := range m.Collections {
			if have[c.Name] || declaredBefore(ms, c.Name, m.Version) {
				continue
			}
			out = append(out, NewCollection{Collection: c.Name, Version: m.Version, File: m.File, Pos: c.Pos,
				Declared: without(CollectionCandidates(ms, m), c.Name), Existing: without(existing, c.Name)})
		}
	}
	return out
}

// declaredBefore reports whether a migration of ms numbered below version
// declares coll.
func declaredBefore(ms []*migration.Migration, coll string, version int64) bool {
	for _, m := range ms {
		if m.Version < version && m.Collection(coll) != nil {
			return true
		}
	}
	return false
}

func without(list []string, s string) []string {
	out := []string{}
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
