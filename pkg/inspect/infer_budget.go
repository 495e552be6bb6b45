package inspect

import (
	"bytes"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The bounds that keep a collection's statistics (and the file rendered
// from them) small whatever the documents hold: a budget of tracked field
// paths per collection, a nesting depth past which nothing is tracked,
// array lengths in bounded buckets, and small example _ids only.

// defaultMaxPaths is how many field paths (fields and array items, at
// every level) one collection's statistics track. Past it, an object
// meeting a new field becomes dynamic (no properties) and a warning names
// it: 4,000 documents with 500 fields under a new parent each must not
// take gigabytes, nor render a file lint refuses.
const defaultMaxPaths = 1000

// maxTrackedDepth is the deepest embedded document whose fields are
// tracked (the top-level document is depth 1). Below it the schema says
// bsonType object and nothing more: each level costs the file two YAML
// levels, and migration files nest at most migration.MaxDepth.
const maxTrackedDepth = 20

// maxLimitNotes bounds the paths a warning lists.
const maxLimitNotes = 5

// maxExampleIDSize is the largest _id (in BSON bytes) kept as an example:
// an _id may be a document of megabytes.
const maxExampleIDSize = 256

// exactLengths is the array length below which lengths are counted
// exactly; longer ones are counted in buckets 2% wide.
const exactLengths = 1024

// newField starts tracking field key of o, or returns nil when o may not
// track another field: then o is dynamic, and the first time that happens
// because of the budget, its path is noted.
func (c *collector) newField(o *objStats, key string) *fieldStats {
	if len(o.fields) >= maxFieldsPerObject {
		o.dynamic = true
		return nil
	}
	if !c.takePath() {
		if !o.dynamic {
			o.dynamic = true
			c.note(&c.limited, displayRoot(o.path))
		}
		return nil
	}
	f := &fieldStats{path: joinPath(o.path, key)}
	o.fields[key] = f
	o.order = append(o.order, key)
	return f
}

// takePath counts one more tracked path, if the budget allows.
func (c *collector) takePath() bool {
	if c.paths >= c.budget() {
		return false
	}
	c.paths++
	return true
}

func (c *collector) note(list *[]string, path string) {
	if len(*list) < maxLimitNotes {
		*list = append(*list, path)
	}
}

// skip walks a value nothing is tracked for, only to count its fields and
// depth (analyze's figures stay whole).
func (c *collector) skip(v bson.RawValue, depth int) {
	var vals []bson.RawValue
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err != nil {
			return
		}
		c.depth = max(c.depth, depth+1)
		for _, e := range elems {
			c.fields++
			c.skip(e.Value(), depth+1)
		}
		return
	case bson.TypeArray:
		vals, _ = v.Array().Values()
		c.depth = max(c.depth, depth+1)
	}
	for _, item := range vals {
		c.skip(item, depth+1)
	}
}

// cloneValue copies a value out of the cursor's buffer, so that keeping
// it (as an example _id) does not keep a whole batch of documents.
func cloneValue(v bson.RawValue) bson.RawValue {
	return bson.RawValue{Type: v.Type, Value: bytes.Clone(v.Value)}
}

func (f *fieldStats) addLength(n int) {
	if f.lens == nil {
		f.lens = map[int]int64{}
		f.minLen, f.maxLen = n, n
	}
	f.minLen, f.maxLen = min(f.minLen, n), max(f.maxLen, n)
	f.lens[lengthKey(n)]++
}

// lengthKey is n below exactLengths, else the upper bound of its 2%
// bucket: at most ~1,400 keys up to the longest array a 16 MB document
// can hold.
func lengthKey(n int) int {
	if n < exactLengths {
		return n
	}
	return int(math.Ceil(math.Pow(sizeBucketRatio, math.Ceil(math.Log(float64(n))/math.Log(sizeBucketRatio)))))
}

// joinPath is the display path of field key of an object at path.
func joinPath(path, key string) string {
	if path == "" {
		return displayKey(key)
	}
	return path + "." + displayKey(key)
}

func displayRoot(path string) string {
	if path == "" {
		return "(the top-level document)"
	}
	return path
}
