package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
)

// ErrNothingToRevert is returned by Down and DownTo when no applied
// migration lies above the target.
var ErrNothingToRevert = errors.New("nothing to revert")

// DowngradeError is a revert refused before anything changed because
// documents are at a version the migration cannot take them back from.
type DowngradeError struct {
	File       string
	Collection string
	Version    int64
	Count      int64
}

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("cannot revert %s: %d %s documents are at version %d and the migration declares no downgrade for %s; add `downgrade:` steps to the file, or upgrade the code instead of reverting the schema",
		e.File, e.Count, e.Collection, e.Version, e.Collection)
}

// Down reverts the last applied migration.
func (r *Runner) Down(ctx context.Context) ([]Applied, error) {
	st, err := r.status(ctx, false)
	if err != nil {
		return nil, err
	}
	if st.Current == 0 {
		return nil, fmt.Errorf("%w: no migration is applied", ErrNothingToRevert)
	}
	prev := int64(0)
	for v := range st.applied {
		if v < st.Current {
			prev = max(prev, v)
		}
	}
	return r.DownTo(ctx, prev)
}

// DownTo reverts applied migrations above version to, newest first: the
// validators and indexes go back to what earlier migrations declare, and
// documents at a reverted version are downgraded where the file declares
// a downgrade. Each migration is checked before anything changes.
func (r *Runner) DownTo(ctx context.Context, to int64) (reverted []Applied, err error) {
	if to < 0 {
		return nil, fmt.Errorf("invalid target version %d", to)
	}
	total := 0
	err = r.withLock(ctx, lockID, func(ctx context.Context) error {
		st, err := r.status(ctx, false)
		if err != nil {
			return err
		}
		var targets []*migration.Migration
		for i := len(r.migrations) - 1; i >= 0; i-- {
			m := r.migrations[i]
			if _, ok := st.applied[m.Version]; ok && m.Version > to {
				targets = append(targets, m)
			}
		}
		for v, e := range st.applied {
			if v > to && !hasVersion(r.migrations, v) {
				return fmt.Errorf("cannot revert migration %d (%s): its file is gone; restore it from version control", v, e.File)
			}
		}
		if len(targets) == 0 {
			return fmt.Errorf("%w: the database is at version %d, not above %d", ErrNothingToRevert, st.Current, to)
		}
		total = len(targets)
		exists, err := r.existing(ctx)
		if err != nil {
			return err
		}
		for _, m := range targets {
			if st.applied[m.Version].Checksum != m.Checksum && !r.cfg.allowDrift {
				return &DriftError{Drifted: []MigrationStatus{{Version: m.Version, File: m.File, State: StateDrifted, Checksum: m.Checksum, LedgerChecksum: st.applied[m.Version].Checksum}}}
			}
			a, err := r.revert(ctx, m, exists)
			if err != nil {
				return err
			}
			reverted = append(reverted, a)
		}
		return nil
	})
	return reverted, interrupted(ctx, err, "down", reverted, total)
}

func hasVersion(ms []*migration.Migration, v int64) bool {
	for _, m := range ms {
		if m.Version == v {
			return true
		}
	}
	return false
}

func (r *Runner) revert(ctx context.Context, m *migration.Migration, exists map[string]bool) (Applied, error) {
	start := time.Now()
	cmds, unknown := downCommands(r.migrations, m, exists, r.windowAt)
	if len(unknown) > 0 {
		return Applied{}, fmt.Errorf("cannot revert %s: it dropped %s, which no earlier migration created, so its definition is unknown; recreate it by hand or add it to an earlier migration",
			m.File, strings.Join(unknown, ", "))
	}
	// Check every data downgrade before changing anything.
	type downgrade struct {
		coll     string
		from, to int64
	}
	var downs []downgrade
	for _, c := range m.Collections {
		if len(c.Upgrade) == 0 || !exists[c.Name] {
			continue
		}
		n, err := r.db.Collection(c.Name).CountDocuments(ctx, bson.D{{Key: r.cfg.versionField, Value: m.Version}})
		if err != nil {
			return Applied{}, fmt.Errorf("count %s documents at version %d: %w", c.Name, m.Version, err)
		}
		if n == 0 {
			continue
		}
		if !r.registry.HasDowngrade(c.Name, m.Version) {
			return Applied{}, &DowngradeError{File: m.File, Collection: c.Name, Version: m.Version, Count: n}
		}
		downs = append(downs, downgrade{c.Name, m.Version, r.registry.Previous(c.Name, m.Version)})
	}
	r.cfg.events(Event{Kind: EventApplyStart, Version: m.Version, File: m.File, Message: "reverting " + m.File})
	results, clientSide, err := r.runAll(ctx, m.Version, m.File, "down", cmds)
	if err != nil {
		return Applied{}, err
	}
	a := Applied{Version: m.Version, Name: m.Name, File: m.File, Direction: "down", Commands: results, ClientSideValidators: clientSide}
	for _, d := range downs {
		n, err := r.downgradeDocuments(ctx, d.coll, d.from)
		if err != nil {
			return a, fmt.Errorf("revert %s: %s: downgraded %d documents, then: %w; the validators and indexes are reverted but migration %d stays recorded: fix the cause and run `mongomig down` again",
				m.File, d.coll, n, err, m.Version)
		}
		a.Documents = append(a.Documents, DocumentChange{Collection: d.coll, From: d.from, To: d.to, Count: n})
		r.cfg.events(Event{Kind: EventDocuments, Version: m.Version, File: m.File, Collection: d.coll, Message: fmt.Sprintf("%s: %d documents downgraded from version %d to %d", d.coll, n, d.from, d.to)})
	}
	if err := r.forget(ctx, m.Version); err != nil {
		return a, err
	}
	a.DurationMS = time.Since(start).Milliseconds()
	r.cfg.events(Event{Kind: EventApplyDone, Version: m.Version, File: m.File, Message: "reverted " + m.File})
	return a, nil
}

// downgradeBatch bounds the documents read per query; the sandbox slows
// down with long-open cursors (see docs/sandbox.md).
const downgradeBatch = 50

// downgradeDocuments rewrites every document of coll at version v with the
// migration's downgrade, guarded on _id and the version so a document
// another writer already changed is left alone and re-read.
func (r *Runner) downgradeDocuments(ctx context.Context, coll string, v int64) (int64, error) {
	c := r.db.Collection(coll)
	var total int64
	for {
		cur, err := c.Find(ctx, bson.D{{Key: r.cfg.versionField, Value: v}}, options.Find().SetLimit(downgradeBatch).SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return total, err
		}
		var docs []bson.D
		if err := cur.All(ctx, &docs); err != nil {
			return total, err
		}
		if len(docs) == 0 {
			return total, nil
		}
		progress := false
		for _, d := range docs {
			out, err := r.registry.Downgrade(coll, v, d)
			if err != nil {
				return total, err
			}
			id, _ := lookup(d, "_id")
			res, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: r.cfg.versionField, Value: v}}, out)
			if err != nil {
				return total, fmt.Errorf("write downgraded document _id=%v: %w", id, err)
			}
			if res.ModifiedCount > 0 || res.MatchedCount > 0 {
				total++
				progress = true
			}
		}
		if !progress {
			return total, errors.New("documents keep changing under the downgrade; stop the writers and retry")
		}
	}
}

func lookup(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}
