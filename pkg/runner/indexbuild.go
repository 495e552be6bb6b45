package runner

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// IndexBuild predicts a unique index a pending migration creates: whether
// MongoDB would fail to build it on the stored documents after the
// upgrades they would get. MongoDB indexes a missing field as null, so
// without sparse or partialFilterExpression every document lacking the
// keys collides with the others (E11000).
type IndexBuild struct {
	Collection string `json:"collection"`
	Index      string `json:"index"`
	File       string `json:"file"`
	// Duplicates counts documents whose key another document already has;
	// MissingAsNull how many of them lack every key field.
	Duplicates    int64 `json:"duplicates"`
	MissingAsNull int64 `json:"missingAsNull"`
	// ExampleIDs are up to five documents that collide.
	ExampleIDs []ExtJSON `json:"exampleIds"`
	// Skipped says why the build was not predicted (partial filter).
	Skipped string `json:"skipped,omitempty"`
}

// Fails reports whether the build would fail.
func (b IndexBuild) Fails() bool { return b.Duplicates > 0 }

// predictIndexBuilds reads each collection a pending migration creates a
// unique index on, upgrades every document with reg (the files up to the
// dry run's target) and counts the keys that collide. It keeps one entry
// per distinct key: memory grows with the collection's distinct keys.
func (r *Runner) predictIndexBuilds(ctx context.Context, pending []*migration.Migration, reg *version.Registry) ([]IndexBuild, error) {
	var out []IndexBuild
	for _, m := range pending {
		for _, c := range m.Collections {
			for _, idx := range c.Indexes.Create {
				if !idx.Unique {
					continue
				}
				b := IndexBuild{Collection: c.Name, Index: idx.Name, File: m.File, ExampleIDs: []ExtJSON{}}
				if idx.PartialFilterExpression != nil {
					b.Skipped = "partialFilterExpression: not predicted"
					out = append(out, b)
					continue
				}
				if err := r.predictOne(ctx, reg, idx, &b); err != nil {
					return nil, err
				}
				out = append(out, b)
			}
		}
	}
	return out, nil
}

func (r *Runner) predictOne(ctx context.Context, reg *version.Registry, idx migration.Index, b *IndexBuild) error {
	cur, err := r.db.Collection(b.Collection).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("predict index %s on %s: %w", idx.Name, b.Collection, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	seen := map[string]bool{}
	for cur.Next(ctx) {
		var d bson.D
		if err := cur.Decode(&d); err != nil {
			return err
		}
		up, _, err := reg.Upgrade(b.Collection, d)
		if err != nil {
			up = d // reported by the validation report; index the stored shape
		}
		key, missing := indexKey(up, idx.Keys)
		if missing && idx.Sparse {
			continue // a sparse index leaves out documents without the keys
		}
		if !seen[key] {
			seen[key] = true
			continue
		}
		b.Duplicates++
		if missing {
			b.MissingAsNull++
		}
		if len(b.ExampleIDs) < 5 {
			raw, _ := bson.Marshal(d)
			b.ExampleIDs = append(b.ExampleIDs, ExtJSON(idOf(raw)))
		}
	}
	return cur.Err()
}

// indexKey is the index key of doc (each key path's value as canonical
// Extended JSON, null where missing) and whether every key path is
// missing. Arrays are keyed as a whole (multikey unique indexes are not
// predicted element by element).
func indexKey(doc bson.D, keys bson.D) (string, bool) {
	var parts []string
	missing := true
	for _, k := range keys {
		v, ok := lookupPath(doc, k.Key)
		if !ok {
			v = nil
		} else {
			missing = false
		}
		b, _ := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\x00"), missing
}

// lookupPath finds a dotted path through embedded documents.
func lookupPath(doc bson.D, path string) (any, bool) {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := lookup(doc, head)
	if !ok || !nested {
		return v, ok
	}
	sub, isDoc := v.(bson.D)
	if !isDoc {
		return nil, false
	}
	return lookupPath(sub, rest)
}
