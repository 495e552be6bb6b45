package runner

import (
	"context"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/lint"
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
	// ([lint.CollectionCandidates]: the collections of earlier files, and
	// those two other files declare); Existing those the database has
	// (mongomig's own and system.* aside). Both sorted, without Collection.
	Declared []string `json:"declared"`
	Existing []string `json:"existing"`
}

// NewCollections lists the collections the pending migrations up to to
// would create (see [NewCollection]), in version and file order. It reads
// listCollections and sends nothing else.
func (r *Runner) NewCollections(ctx context.Context, to int64) ([]NewCollection, error) {
	pending, err := r.pending(ctx, to)
	if err != nil || len(pending) == 0 {
		return nil, err
	}
	have, err := r.existing(ctx)
	if err != nil {
		return nil, err
	}
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
			if have[c.Name] || r.declaredBefore(c.Name, m.Version) {
				continue
			}
			out = append(out, NewCollection{Collection: c.Name, Version: m.Version, File: m.File, Pos: c.Pos,
				Declared: without(lint.CollectionCandidates(r.migrations, m), c.Name), Existing: without(existing, c.Name)})
		}
	}
	return out, nil
}

// declaredBefore reports whether a migration numbered below version
// declares coll.
func (r *Runner) declaredBefore(coll string, version int64) bool {
	for _, m := range r.migrations {
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
