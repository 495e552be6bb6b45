package inspect

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// InferOptions configure [Infer].
type InferOptions struct {
	// Collections limits the inference; empty means every collection of
	// the database except system.* and mongomig_* ones (and views).
	Collections []string
	// Sample reads N documents per collection: a uniform $sample where
	// the server has it, else the first N in _id order (see
	// [InferredCollection].Read). 0 reads every document.
	Sample int64
	// EnumMax is the most distinct values a string field may have to get
	// an enum; 0 means [DefaultEnumMax], a negative value disables enums.
	EnumMax int
	// Examples is how many documents per collection (the first ones
	// read) the file gives as examples, without the version field; 0:
	// none, since documents may hold personal data.
	Examples int
	// MaxPaths is the budget of field paths tracked per collection (0:
	// 1000); past it, objects meeting new fields are left dynamic and a
	// warning names them.
	MaxPaths int
	// Progress, if set, is called every 1000 documents and at the end.
	Progress func(collection string, scanned, total int64)
}

// MaxEnumMax is the largest [InferOptions].EnumMax: larger values are
// taken as it (the distinct values counted per field are kept in memory).
const MaxEnumMax = 100

// ErrUnknownCollection is returned (wrapped, with the collections the
// database has) when [InferOptions].Collections or
// [AnalyzeOptions].Collections names a collection the database does not
// have.
var ErrUnknownCollection = version.ErrUnknownCollection

// DefaultEnumMax is the default of [InferOptions].EnumMax.
const DefaultEnumMax = 8

// Ways a collection was read, for [InferredCollection].Read.
const (
	ReadAll    = "all"    // every document
	ReadSample = "sample" // a uniform $sample of N
	ReadFirst  = "first"  // the first N in _id order (no $sample on the server)
)

// Inference is what [Infer] observed in a database: per collection a
// $jsonSchema every document read satisfies, and the indexes.
type Inference struct {
	Database    string                `json:"database"`
	Collections []*InferredCollection `json:"collections"`
	Warnings    []string              `json:"warnings,omitempty"`
	// FromData counts what the baseline holds that came from the
	// documents' data rather than from their types: review it before
	// committing the file.
	FromData DataCounts            `json:"fromData"`
	enumMax  int                   //
	stats    map[string]*collector //
}

// DataCounts is what a baseline took from the documents' data.
type DataCounts struct {
	// Enums is how many fields got an enum, EnumValues their values.
	Enums      int `json:"enums"`
	EnumValues int `json:"enumValues"`
	// PropertyNames is how many property names the schemas declare.
	PropertyNames int `json:"propertyNames"`
	// Examples is how many documents are given as examples.
	Examples int `json:"examples"`
}

// InferredCollection is one collection's inferred schema and indexes.
type InferredCollection struct {
	Name string `json:"collection"`
	// Documents is how many documents were read; Total the server's
	// estimate of the collection's size.
	Documents int64 `json:"documents"`
	Total     int64 `json:"total"`
	// Read is how they were chosen: ReadAll, ReadSample or ReadFirst.
	Read string `json:"read"`
	// Schema is the inferred $jsonSchema (nil for an empty collection).
	Schema ExtJSON `json:"schema,omitempty"`
	// Indexes are the existing indexes but _id_, as the file declares
	// them; in JSON, as createIndexes specifications.
	Indexes []migration.Index `json:"-"`
	// IndexSpecs are Indexes as createIndexes specifications, for JSON.
	IndexSpecs []ExtJSON `json:"indexes"`
	// SkippedIndexes are indexes the file format cannot declare.
	SkippedIndexes []SkippedIndex `json:"skippedIndexes,omitempty"`
	// MixedTypes are the fields seen with more than one BSON type.
	MixedTypes []MixedType `json:"mixedTypes,omitempty"`
	schema     bson.D
	examples   []bson.Raw
	counts     DataCounts
}

// SkippedIndex is an index left out of the baseline, and why.
type SkippedIndex struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// MixedType is a field whose values have several BSON types.
type MixedType struct {
	// Path is the field's dotted path; [] marks the items of an array.
	Path  string      `json:"path"`
	Types []TypeCount `json:"types"`
}

// TypeCount is how many values of one type a field had, with a few _ids
// of documents holding one.
type TypeCount struct {
	Type       string    `json:"type"`
	Count      int64     `json:"count"`
	ExampleIDs []ExtJSON `json:"exampleIds"`
}

// Infer reads the collections of db and infers, for each, the $jsonSchema
// that every document it read satisfies, and lists its indexes. It only
// reads. Memory grows with the number of distinct field paths, not with
// the number of documents.
func Infer(ctx context.Context, db *mongo.Database, opts InferOptions) (*Inference, error) {
	if opts.EnumMax == 0 {
		opts.EnumMax = DefaultEnumMax
	}
	opts.EnumMax = min(opts.EnumMax, MaxEnumMax)
	names, err := inferTargets(ctx, db, opts.Collections)
	if err != nil {
		return nil, err
	}
	inf := &Inference{Database: db.Name(), enumMax: opts.EnumMax, stats: map[string]*collector{}}
	for _, name := range names {
		ic, col, warn, err := inferCollection(ctx, db.Collection(name), opts)
		if err != nil {
			return nil, fmt.Errorf("infer %s: %w", name, err)
		}
		if warn != "" && !slices.Contains(inf.Warnings, warn) {
			inf.Warnings = append(inf.Warnings, warn)
		}
		inf.Warnings = append(inf.Warnings, col.limitWarnings(name)...)
		inf.FromData.add(ic.counts)
		inf.FromData.Examples += len(ic.examples)
		inf.Collections = append(inf.Collections, ic)
		inf.stats[name] = col
	}
	return inf, nil
}

// inferTargets returns the collections to read, sorted.
func inferTargets(ctx context.Context, db *mongo.Database, want []string) ([]string, error) {
	// Views are left out: they have no indexes and take no validator.
	all, err := db.ListCollectionNames(ctx, bson.D{{Key: "type", Value: "collection"}})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	var own []string
	for _, n := range all {
		if !strings.HasPrefix(n, "system.") && !strings.HasPrefix(n, "mongomig_") {
			own = append(own, n)
		}
	}
	sort.Strings(own)
	if len(want) == 0 {
		return own, nil
	}
	var out []string
	for _, w := range want {
		if !slices.Contains(own, w) {
			if len(own) == 0 {
				return nil, fmt.Errorf("%w: %s does not exist; the database has no collection", ErrUnknownCollection, w)
			}
			return nil, fmt.Errorf("%w: %s does not exist; the database has %s", ErrUnknownCollection, w, strings.Join(own, ", "))
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

func inferCollection(ctx context.Context, coll *mongo.Collection, opts InferOptions) (*InferredCollection, *collector, string, error) {
	ic := &InferredCollection{Name: coll.Name(), Read: ReadAll}
	total, err := estimate(ctx, coll, opts.Sample, opts.Progress != nil)
	if err != nil {
		return nil, nil, "", err
	}
	ic.Total = total
	cur, read, warn, err := openScan(ctx, coll, opts.Sample)
	if err != nil {
		return nil, nil, "", err
	}
	ic.Read = read
	col := &collector{root: newObjStats(), enumCap: opts.EnumMax, maxPaths: opts.MaxPaths}
	defer cur.Close(context.WithoutCancel(ctx))
	limit := total
	if opts.Sample > 0 && opts.Sample < total {
		limit = opts.Sample
	}
	for cur.Next(ctx) {
		if err := col.add(cur.Current); err != nil {
			return nil, nil, "", fmt.Errorf("decode document %d: %w", ic.Documents+1, err)
		}
		ic.Documents++
		if len(ic.examples) < opts.Examples {
			ic.examples = append(ic.examples, append(bson.Raw(nil), cur.Current...))
		}
		if opts.Progress != nil && ic.Documents%1000 == 0 {
			opts.Progress(ic.Name, ic.Documents, max(limit, ic.Documents))
		}
	}
	if err := cur.Err(); err != nil {
		return nil, nil, "", fmt.Errorf("read documents: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(ic.Name, ic.Documents, ic.Documents)
	}
	if ic.Read == ReadAll {
		ic.Total = ic.Documents
	}
	if ic.Documents > 0 {
		b := &schemaBuilder{enumMax: opts.EnumMax}
		ic.schema = b.object(col.root, false)
		ic.Schema = schemaExtJSON(ic.schema)
		ic.counts = DataCounts{Enums: b.enums, EnumValues: b.enumValues, PropertyNames: b.propKeys}
	}
	ic.MixedTypes = mixedTypes(col.root, "")
	if ic.Indexes, ic.SkippedIndexes, err = existingIndexes(ctx, coll); err != nil {
		return nil, nil, "", err
	}
	ic.IndexSpecs = []ExtJSON{}
	for _, idx := range ic.Indexes {
		ic.IndexSpecs = append(ic.IndexSpecs, schemaExtJSON(idx.Spec()))
	}
	return ic, col, warn, nil
}

// estimate returns the server's estimate of the collection's size when
// it is needed: for a sample (to say of how many) or for progress. (On
// MongoDB it is metadata; FerretDB counts by reading every document.)
func estimate(ctx context.Context, coll *mongo.Collection, sample int64, progress bool) (int64, error) {
	if sample <= 0 && !progress {
		return 0, nil
	}
	n, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	return n, nil
}

// openScan opens the cursor: every document, or a sample of n.
func openScan(ctx context.Context, coll *mongo.Collection, n int64) (*mongo.Cursor, string, string, error) {
	if n <= 0 {
		cur, err := coll.Find(ctx, bson.D{})
		if err != nil {
			return nil, "", "", fmt.Errorf("read documents: %w", err)
		}
		return cur, ReadAll, "", nil
	}
	cur, err := coll.Aggregate(ctx, mongo.Pipeline{{{Key: "$sample", Value: bson.D{{Key: "size", Value: n}}}}})
	if err == nil {
		return cur, ReadSample, "", nil
	}
	if !probe.IsNotSupported(err) {
		return nil, "", "", fmt.Errorf("sample documents: %w", err)
	}
	aggErr := err
	cur, err = coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(n).SetBatchSize(1000))
	if err != nil {
		return nil, "", "", fmt.Errorf("read documents: %w", err)
	}
	warn := fmt.Sprintf("the server has no $sample (%s): the sample of %d read the first %d documents of each collection in _id order, not a uniform sample; documents after them may not match the schema", probe.ServerMessage(aggErr), n, n)
	return cur, ReadFirst, warn, nil
}

func schemaExtJSON(d bson.D) ExtJSON {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return ExtJSON(fmt.Sprintf("%q", err.Error()))
	}
	return ExtJSON(b)
}

// mixedTypes lists, depth first in field order, every field seen with
// more than one type; nothing below a map-like object (its keys are
// data). (prefix is unused: paths are the fields' display paths.)
func mixedTypes(o *objStats, prefix string) []MixedType {
	var out []MixedType
	if o.mapLike() {
		return nil
	}
	for _, k := range o.order {
		f := o.fields[k]
		out = append(out, mixedField(f, f.path)...)
	}
	return out
}

func mixedField(f *fieldStats, path string) []MixedType {
	var out []MixedType
	if len(f.types) > 1 {
		m := MixedType{Path: path}
		for _, t := range f.typeNames() {
			tc := TypeCount{Type: t, Count: f.types[t]}
			for _, id := range f.examples[t] {
				tc.ExampleIDs = append(tc.ExampleIDs, safeID(id))
			}
			m.Types = append(m.Types, tc)
		}
		out = append(out, m)
	}
	if f.object != nil {
		out = append(out, mixedTypes(f.object, path+".")...)
	}
	if f.items != nil {
		out = append(out, mixedField(f.items, f.items.path)...)
	}
	return out
}

func (d *DataCounts) add(o DataCounts) {
	d.Enums += o.Enums
	d.EnumValues += o.EnumValues
	d.PropertyNames += o.PropertyNames
}

// limitWarnings say where the path budget or the depth limit left objects
// without properties.
func (c *collector) limitWarnings(coll string) []string {
	var out []string
	if len(c.limited) > 0 {
		out = append(out, fmt.Sprintf("%s: more than %d distinct field paths; objects meeting new fields past that were left without properties (bsonType object only): %s",
			displayName(coll), c.budget(), strings.Join(c.limited, ", ")))
	}
	if len(c.deep) > 0 {
		out = append(out, fmt.Sprintf("%s: documents nested deeper than %d levels; below that the schema is bsonType object only: %s",
			displayName(coll), maxTrackedDepth, strings.Join(c.deep, ", ")))
	}
	return out
}

func (c *collector) budget() int {
	if c.maxPaths <= 0 {
		return defaultMaxPaths
	}
	return c.maxPaths
}

// displayName is a collection name as a message may print it.
func displayName(name string) string { return migration.DisplayName(name) }
