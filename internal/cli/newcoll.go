package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/fatih/color"

	"github.com/mongomig/mongomig/internal/suggest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

// warnNewCollections tells, before up (or its dry run, would true) sends
// anything, which collections it creates that no earlier migration
// declares and the database lacks: a warning with a did-you-mean where
// another file's or the database's collection is one typo away (`user:`
// for `users:`, which up used to create silently), else one note, given
// only when the database already has collections of its own (on an empty
// database every collection is new).
func (e *env) warnNewCollections(ctx context.Context, r *runner.Runner, to int64, would bool) error {
	news, err := r.NewCollections(ctx, to)
	if err != nil || len(news) == 0 {
		return err
	}
	creates, fix := "up creates", ""
	if would {
		creates, fix = "up would create", " (rename the key before applying)"
	}
	var plain []string
	for _, n := range news {
		where := n.File
		if n.Pos.IsValid() {
			where = fmt.Sprintf("%s:%d:%d", n.File, n.Pos.Line, n.Pos.Column)
		}
		if w, ok := suggest.Name(n.Collection, n.Declared); ok {
			e.out.warnf("%s: collection %s is declared by no earlier migration and the database has none, so %s it; did you mean %s, which another migration declares?%s",
				migration.DisplayName(where), n.Collection, creates, w, fix)
			continue
		}
		if w, ok := suggest.Name(n.Collection, n.Existing); ok {
			e.out.warnf("%s: collection %s is declared by no earlier migration and the database has none, so %s it; did you mean %s, which the database has?%s",
				migration.DisplayName(where), n.Collection, creates, w, fix)
			continue
		}
		if len(n.Existing) > 0 {
			plain = append(plain, n.Collection)
		}
	}
	if len(plain) > 0 {
		fmt.Fprintf(e.out.err, "%s %s %s %s (declared by no earlier migration, absent from the database)\n",
			paint(e.out.errColor, color.FgYellow, "note:"), creates, verb(len(plain), "collections", "collection"), display(strings.Join(plain, ", ")))
	}
	return nil
}
