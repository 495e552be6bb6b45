package inspect

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The statistics init gathers while it streams a collection. Their size is
// bounded by the shape of the documents, not by their number: one node per
// distinct field path, a few example _ids per type, at most enumCap
// distinct string values and one counter per distinct array length.

// maxFieldsPerObject bounds the properties tracked at one path: beyond it
// the object is treated as a map with dynamic keys (no properties, no
// required) and the report says so.
const maxFieldsPerObject = 500

// maxTypeExamples is how many _ids are kept per type of a field.
const maxTypeExamples = 3

// maxEnumLength is the longest string that may appear in an inferred enum:
// longer values are free text.
const maxEnumLength = 40

// fieldStats is what was seen at one field path (or in the items of an
// array at that path).
type fieldStats struct {
	// present counts the values seen (for items: the items).
	present int64
	types   map[string]int64
	// examples are up to maxTypeExamples _ids per type.
	examples map[string][]bson.RawValue
	// strs counts each distinct string value, until more than enumCap
	// distinct values were seen (then nil and tooMany is set).
	strs    map[string]int64
	tooMany bool
	// object holds the fields of the embedded documents seen here.
	object *objStats
	// items is the union of the items of the arrays seen here; lens
	// counts the arrays per length (exact below exactLengths, in 2%
	// buckets above: see lengthKey), minLen and maxLen are exact.
	items          *fieldStats
	lens           map[int]int64
	minLen, maxLen int
	// path is the field's path as it may be printed (see displayKey);
	// deep is set when embedded documents here were nested past
	// maxTrackedDepth and left untracked.
	path string
	deep bool
	// age relates the lengths of the arrays seen here to their
	// documents' creation time (analyze only).
	age *correlation
	// ageRanks samples the same pairs for their rank correlation.
	ageRanks *rankSample
}

// objStats is the fields of the documents seen at one path.
type objStats struct {
	count   int64
	fields  map[string]*fieldStats
	order   []string
	dynamic bool // more than maxFieldsPerObject distinct fields, or past the path budget
	path    string
	// mapKind caches mapLike: 0 unknown, 1 map-like, 2 not.
	mapKind int8
}

func newObjStats() *objStats { return &objStats{fields: map[string]*fieldStats{}} }

func newObjStatsAt(path string) *objStats {
	return &objStats{fields: map[string]*fieldStats{}, path: path}
}

// collector accumulates the statistics of one collection.
type collector struct {
	root    *objStats
	enumCap int
	// analyze: track array growth with age, depth and field counts.
	analyze bool
	// created is the current document's creation time (Unix seconds,
	// from an ObjectId _id; 0 when unknown).
	created int64
	// depth and fields of the current document.
	depth, fields int
	// maxPaths is the budget of field paths tracked (0: defaultMaxPaths);
	// paths counts them; limited names the objects that became dynamic
	// when it ran out, deep those nested past maxTrackedDepth (at most
	// maxLimitNotes each).
	maxPaths, paths int
	limited, deep   []string
}

// add records one document.
func (c *collector) add(doc bson.Raw) error {
	id := cloneValue(doc.Lookup("_id"))
	c.created, c.depth, c.fields = 0, 0, 0
	if oid, ok := id.ObjectIDOK(); ok {
		c.created = oid.Timestamp().Unix()
	}
	return c.object(c.root, doc, id, 1)
}

func (c *collector) object(o *objStats, doc bson.Raw, id bson.RawValue, depth int) error {
	o.count++
	c.depth = max(c.depth, depth)
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	for _, e := range elems {
		key := e.Key()
		f := o.fields[key]
		if f == nil {
			if f = c.newField(o, key); f == nil {
				c.fields++
				c.skip(e.Value(), depth)
				continue
			}
		}
		c.fields++
		if err := c.value(f, e.Value(), id, depth); err != nil {
			return err
		}
	}
	return nil
}

func (c *collector) value(f *fieldStats, v bson.RawValue, id bson.RawValue, depth int) error {
	f.present++
	t := bsonTypeName(v.Type)
	if f.types == nil {
		f.types = map[string]int64{}
		f.examples = map[string][]bson.RawValue{}
	}
	f.types[t]++
	if ex := f.examples[t]; len(ex) < maxTypeExamples && id.Type != 0 && len(id.Value) <= maxExampleIDSize && (len(ex) == 0 || !ex[len(ex)-1].Equal(id)) {
		f.examples[t] = append(f.examples[t], id)
	}
	switch v.Type {
	case bson.TypeString:
		c.str(f, v.StringValue())
	case bson.TypeEmbeddedDocument:
		if f.object == nil && !f.deep {
			if depth+1 > maxTrackedDepth {
				f.deep = true
				c.note(&c.deep, f.path)
			} else {
				f.object = newObjStatsAt(f.path)
			}
		}
		if f.object == nil {
			c.skip(v, depth)
			return nil
		}
		return c.object(f.object, v.Document(), id, depth+1)
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return err
		}
		f.addLength(len(vals))
		c.depth = max(c.depth, depth+1)
		if c.analyze && c.created != 0 {
			if f.age == nil {
				f.age = &correlation{}
			}
			f.age.add(float64(c.created), float64(len(vals)))
			if f.ageRanks == nil {
				f.ageRanks = &rankSample{}
			}
			f.ageRanks.add(float64(c.created), float64(len(vals)))
		}
		if f.items == nil && !c.takePath() {
			c.skip(v, depth)
			return nil
		}
		if f.items == nil {
			f.items = &fieldStats{path: f.path + "[]"}
		}
		for _, item := range vals {
			if err := c.value(f.items, item, id, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *collector) str(f *fieldStats, s string) {
	if f.tooMany || c.enumCap <= 0 {
		return
	}
	if len(s) > maxEnumLength {
		f.tooMany, f.strs = true, nil
		return
	}
	if f.strs == nil {
		f.strs = map[string]int64{}
	}
	if _, seen := f.strs[s]; !seen && len(f.strs) >= c.enumCap {
		f.tooMany, f.strs = true, nil
		return
	}
	f.strs[s]++
}

// typeNames returns the types seen, most frequent first (ties by name).
func (f *fieldStats) typeNames() []string {
	names := make([]string, 0, len(f.types))
	for t := range f.types {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool {
		if f.types[names[i]] != f.types[names[j]] {
			return f.types[names[i]] > f.types[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

// quantile returns the smallest array length l such that at least the
// fraction q of the arrays are no longer than l.
func (f *fieldStats) quantile(q float64) int {
	keys := make([]int, 0, len(f.lens))
	var n int64
	for l, c := range f.lens {
		keys = append(keys, l)
		n += c
	}
	sort.Ints(keys)
	var seen int64
	for _, l := range keys {
		seen += f.lens[l]
		if float64(seen) >= q*float64(n) {
			return min(l, f.maxLen)
		}
	}
	return 0
}

// lengths returns the minimum, median and maximum array length.
func (f *fieldStats) lengths() (lo, median, hi int) {
	keys := make([]int, 0, len(f.lens))
	var n int64
	for l, c := range f.lens {
		keys = append(keys, l)
		n += c
	}
	if n == 0 {
		return 0, 0, 0
	}
	sort.Ints(keys)
	lo, hi = f.minLen, f.maxLen
	half := (n + 1) / 2
	var seen int64
	for _, l := range keys {
		seen += f.lens[l]
		if seen >= half {
			return lo, min(l, hi), hi
		}
	}
	return lo, hi, hi
}

// Enums need evidence that the set is closed: every value seen at least
// minEnumCount times, and on average at least minEnumMean times.
const (
	minEnumCount = 5
	minEnumMean  = 10
)

// enumValues returns the string values of f sorted, when f qualifies for
// an enum: only strings, at most enumCap distinct values, each a label
// (isLabel: no free text, identifier, number, email or key), each seen
// at least minEnumCount times and minEnumMean times on average (a value
// seen once or twice says the set is open).
func (f *fieldStats) enumValues(enumCap int) []string {
	if enumCap <= 0 || f.tooMany || len(f.strs) == 0 || len(f.types) != 1 || f.types["string"] == 0 {
		return nil
	}
	var total int64
	for s, c := range f.strs {
		if c < minEnumCount || !isLabel(s) {
			return nil
		}
		total += c
	}
	if total < minEnumMean*int64(len(f.strs)) {
		return nil
	}
	vals := make([]string, 0, len(f.strs))
	for s := range f.strs {
		vals = append(vals, s)
	}
	sort.Strings(vals)
	return vals
}

// bsonTypeName is the $jsonSchema bsonType alias of t.
func bsonTypeName(t bson.Type) string {
	switch t {
	case bson.TypeDouble:
		return "double"
	case bson.TypeString:
		return "string"
	case bson.TypeEmbeddedDocument:
		return "object"
	case bson.TypeArray:
		return "array"
	case bson.TypeBinary:
		return "binData"
	case bson.TypeUndefined:
		return "undefined"
	case bson.TypeObjectID:
		return "objectId"
	case bson.TypeBoolean:
		return "bool"
	case bson.TypeDateTime:
		return "date"
	case bson.TypeNull:
		return "null"
	case bson.TypeRegex:
		return "regex"
	case bson.TypeDBPointer:
		return "dbPointer"
	case bson.TypeJavaScript:
		return "javascript"
	case bson.TypeSymbol:
		return "symbol"
	case bson.TypeCodeWithScope:
		return "javascriptWithScope"
	case bson.TypeInt32:
		return "int"
	case bson.TypeTimestamp:
		return "timestamp"
	case bson.TypeInt64:
		return "long"
	case bson.TypeDecimal128:
		return "decimal"
	case bson.TypeMinKey:
		return "minKey"
	case bson.TypeMaxKey:
		return "maxKey"
	}
	return "unknown"
}
