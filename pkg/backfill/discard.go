package backfill

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// DiscardError is a backfill refused, before it wrote anything, because a
// step of a migration it would run discards stored data that the file
// does not account for: no `discard: true` on the step, and no earlier
// step of the same migration keeps the data elsewhere
// ([migration.KeptElsewhere]). Count says what the step would discard
// from the documents below the migration's version.
type DiscardError struct {
	Collection string
	// Migration and File name the migration, Step the step's index in the
	// collection's upgrade (0-based), Op and Field the operation and the
	// field path, Pos the operand's place in the file.
	Migration int64
	File      string
	Step      int
	Op        migration.Op
	Field     string
	Pos       migration.Pos
	Count     version.DiscardCount
}

func (e *DiscardError) Error() string {
	what := fmt.Sprintf("%s from the documents below version %d", e.Count.Summary(), e.Migration)
	if !e.Count.Discards() {
		what = fmt.Sprintf("which discards stored data (none now: no document below version %d holds data at %s, but an old release may write it again)", e.Migration, e.Field)
	}
	return fmt.Sprintf("%s: %s:%d:%d: %s %s (migration %d, upgrade step %d) %s, and no earlier step of the migration keeps it; the backfill wrote nothing",
		e.Collection, migration.DisplayName(e.File), e.Pos.Line, e.Pos.Column, e.Op, e.Field, e.Migration, e.Step+1, what)
}

// checkDiscards refuses a backfill of names while a migration it would run
// discards data the file does not account for, as up refuses to apply it
// (lint.Discarding: an unset, or a set of a field the validator declares an
// array or a document, without `discard: true` and with nothing keeping
// the data), whatever the documents hold now: an old release may write the
// field again at any time. The error carries the count. For the steps the
// file allows, it logs what they will discard. It only reads, and counts
// nothing for the other steps.
func (r *backfiller) checkDiscards(ctx context.Context, names []string) error {
	var errs []error
	for _, name := range names {
		coll := r.db.Collection(name)
		for _, m := range r.migrations {
			if m.Version > r.registry.Current(name) {
				break
			}
			refused := lint.Discarding(r.migrations, []*migration.Migration{m})
			for _, d := range migration.Discards(m) {
				refuse := refusedAt(refused, d)
				if d.Collection != name || !refuse && !d.Guarded() {
					continue
				}
				c, err := r.registry.CountDiscard(ctx, coll, d)
				if err != nil {
					return err
				}
				switch {
				case refuse:
					errs = append(errs, &DiscardError{Collection: name, Migration: m.Version, File: m.File, Step: d.Step, Op: d.Op, Field: d.Path, Pos: d.Pos, Count: c})
				case c.Discards():
					r.log.Log(events.BackfillDiscards{Collection: name, Migration: m.Version, File: m.File, Line: d.Pos.Line, Op: string(d.Op), Path: d.Path, Summary: c.Summary()})
				}
			}
		}
	}
	return errors.Join(errs...)
}

// refusedAt reports whether refused names d's operand.
func refusedAt(refused *lint.Report, d migration.Discard) bool {
	for _, p := range refused.Problems {
		if p.File == d.File && p.Line == d.Pos.Line && p.Column == d.Pos.Column {
			return true
		}
	}
	return false
}
