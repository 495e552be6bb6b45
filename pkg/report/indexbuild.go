package report

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// IndexBuild predicts a unique index a pending migration creates: whether
// MongoDB would fail to build it on the documents as they are stored.
// `up` builds each migration's index on the stored documents when it
// applies the migration: upgrades are lazy, and nothing has run them then
// (a document a backfill already upgraded counts as it is stored, too).
// MongoDB indexes a missing field as null (a non-sparse index stores a
// null entry for a document lacking the field: "Unique Index and Missing
// Field" in MongoDB's manual, core/index-unique), so without sparse
// or partialFilterExpression every document lacking the keys collides
// with the others (E11000).
type IndexBuild struct {
	Collection string `json:"collection"`
	Index      string `json:"index"`
	File       string `json:"file"`
	// Duplicates counts documents whose key another document already has;
	// MissingAsNull how many of them lack every key field.
	Duplicates    int64 `json:"duplicates"`
	MissingAsNull int64 `json:"missingAsNull"`
	// ExampleIDs are up to five documents that collide: each a later
	// document (in _id order) than one with its key.
	ExampleIDs []ExtJSON `json:"exampleIds"`
	// Collisions are the first MaxCollisions keys (in the order their
	// second document comes in _id order) that collide, each with the
	// documents sharing it; CollidingKeys counts every such key.
	Collisions    []IndexCollision `json:"collisions"`
	CollidingKeys int64            `json:"collidingKeys"`
	// Skipped says why the build was not predicted (partial filter).
	Skipped string `json:"skipped,omitempty"`
}

// IndexCollision is one key that several documents share.
type IndexCollision struct {
	// Key is {path: value} per key field, null where missing, only when
	// Options.ShowKeyValues asks for it (empty otherwise: the values are
	// the application's data); a string is cut to 20 characters, any
	// other value whose Extended JSON is longer than that (documents,
	// arrays, binary) becomes an excerpt of its text, marked by "…".
	Key ExtJSON `json:"key,omitempty"`
	// Count is how many documents have the key; IDs the first
	// MaxCollisionIDs of them in _id order.
	Count int64     `json:"count"`
	IDs   []ExtJSON `json:"ids"`
}

// MaxCollisions is how many colliding keys an IndexBuild details;
// MaxCollisionIDs how many _ids it lists per key.
const (
	MaxCollisions   = 5
	MaxCollisionIDs = 5
)

// Fails reports whether the build would fail.
func (b IndexBuild) Fails() bool { return b.Duplicates > 0 }

// predictIndexBuilds reads each collection a pending migration creates a
// unique index on and counts the keys of the documents as stored that
// collide (see IndexBuild); showValues keeps the colliding keys' values. It keeps one entry
// per distinct key (the key and the first _id having it): memory grows
// with the collection's distinct keys. The details of a collision come
// from the same scan: no more round trips than reading the collection.
func (r *Reporter) predictIndexBuilds(ctx context.Context, pending []*migration.Migration, showValues bool) ([]IndexBuild, error) {
	var out []IndexBuild
	for _, m := range pending {
		for _, c := range m.Collections {
			for _, idx := range c.Indexes.Create {
				if !idx.Unique {
					continue
				}
				b := IndexBuild{Collection: c.Name, Index: idx.Name, File: m.File, ExampleIDs: []ExtJSON{}, Collisions: []IndexCollision{}}
				if idx.PartialFilterExpression != nil {
					b.Skipped = "partialFilterExpression: not predicted"
					out = append(out, b)
					continue
				}
				if err := r.predictOne(ctx, idx, &b, showValues); err != nil {
					return nil, err
				}
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// keySeen is what predictOne keeps per distinct key: the first _id
// having it (its BSON type byte and value) and whether another document
// had it since.
type keySeen struct {
	firstID  string
	collided bool
}

func (r *Reporter) predictOne(ctx context.Context, idx migration.Index, b *IndexBuild, showValues bool) error {
	cur, err := r.db.Collection(b.Collection).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("predict index %s on %s: %w", idx.Name, b.Collection, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	seen := map[string]keySeen{}
	detailed := map[string]int{} // key -> index into b.Collisions
	for cur.Next(ctx) {
		var d bson.D
		if err := cur.Decode(&d); err != nil {
			return err
		}
		key, missing := indexKey(d, idx.Keys)
		if missing && idx.Sparse {
			continue // a sparse index leaves out documents without the keys
		}
		id := cur.Current.Lookup("_id")
		first, ok := seen[key]
		if !ok {
			seen[key] = keySeen{firstID: string(append([]byte{byte(id.Type)}, id.Value...))}
			continue
		}
		b.Duplicates++
		if missing {
			b.MissingAsNull++
		}
		if len(b.ExampleIDs) < 5 {
			b.ExampleIDs = append(b.ExampleIDs, ExtJSON(bsonx.IDOf(cur.Current)))
		}
		if !first.collided {
			first.collided = true
			seen[key] = first
			b.CollidingKeys++
			if len(b.Collisions) < MaxCollisions {
				detailed[key] = len(b.Collisions)
				c := IndexCollision{Count: 1, IDs: []ExtJSON{bsonx.ExtJSONOf(bson.RawValue{Type: bson.Type(first.firstID[0]), Value: []byte(first.firstID[1:])})}}
				if showValues || missing { // a missing key is null: no data
					c.Key = keyValue(d, idx.Keys)
				}
				b.Collisions = append(b.Collisions, c)
			}
		}
		if i, ok := detailed[key]; ok {
			c := &b.Collisions[i]
			c.Count++
			if len(c.IDs) < MaxCollisionIDs {
				c.IDs = append(c.IDs, bsonx.ExtJSONOf(id))
			}
		}
	}
	return cur.Err()
}

// keyValue is the key of doc as {path: value}, null where missing, each
// value abbreviated (see IndexCollision.Key).
func keyValue(doc bson.D, keys bson.D) ExtJSON {
	kv := bson.D{}
	for _, k := range keys {
		v, _ := lookupPath(doc, k.Key)
		kv = append(kv, bson.E{Key: k.Key, Value: abbreviate(v)})
	}
	b, err := bson.MarshalExtJSON(kv, false, false)
	if err != nil {
		return ExtJSON(fmt.Sprintf("%q", err.Error()))
	}
	return ExtJSON(b)
}

// abbreviate cuts a string to bsonx.MaxValueExcerpt characters; numbers,
// booleans, null, ObjectIds and dates are kept; any other value whose
// relaxed Extended JSON is longer than that becomes an excerpt of that
// text.
func abbreviate(v any) any {
	switch x := v.(type) {
	case nil, bool, int32, int64, float64, bson.ObjectID, bson.DateTime, bson.Decimal128, bson.Null:
		return v
	case string:
		return bsonx.Excerpt(x, bsonx.MaxValueExcerpt)
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return "…"
	}
	text := string(b[len(`{"v":`) : len(b)-1])
	if len([]rune(text)) <= bsonx.MaxValueExcerpt {
		return v
	}
	return bsonx.Excerpt(text, bsonx.MaxValueExcerpt)
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
	v, ok := bsonx.Lookup(doc, head)
	if !ok || !nested {
		return v, ok
	}
	sub, isDoc := v.(bson.D)
	if !isDoc {
		return nil, false
	}
	return lookupPath(sub, rest)
}
