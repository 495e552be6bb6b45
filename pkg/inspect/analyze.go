package inspect

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/version"
)

// MaxDocumentSize is MongoDB's limit on a document's BSON size (16 MiB).
const MaxDocumentSize = 16 << 20

// AnalyzeOptions configure [Analyze]. Zero values take the defaults.
type AnalyzeOptions struct {
	// Collections limits the analysis; empty means every collection but
	// system.* and mongomig_* ones.
	Collections []string
	// Sample reads N documents per collection, as [InferOptions].Sample.
	Sample int64
	// SizeWarn is the fraction of MaxDocumentSize at which the p99 or
	// largest document size is a risk; default 0.5.
	SizeWarn float64
	// ArrayWarn is the length from which an array whose longest is at
	// least 10 times its median is a risk; default 100.
	ArrayWarn int
	// GrowthWarn is the correlation between an array's length and its
	// document's age (from an ObjectId _id) from which the array is a
	// risk, when its longest has at least 10 items; default 0.5.
	GrowthWarn float64
	// SparseBelow is the presence (fraction of the parent documents)
	// under which a field is listed as sparse; default 0.1.
	SparseBelow float64
	// VersionField is the document version field; default "version".
	VersionField string
	// Progress, if set, is called every 1000 documents and at the end.
	Progress func(collection string, scanned, total int64)
}

func (o *AnalyzeOptions) defaults() {
	if o.SizeWarn <= 0 {
		o.SizeWarn = 0.5
	}
	if o.ArrayWarn <= 0 {
		o.ArrayWarn = 100
	}
	if o.GrowthWarn <= 0 {
		o.GrowthWarn = 0.5
	}
	if o.SparseBelow <= 0 {
		o.SparseBelow = 0.1
	}
	if o.VersionField == "" {
		o.VersionField = version.DefaultField
	}
}

// Analysis is a read-only design-risk report of a database.
type Analysis struct {
	Database    string                `json:"database"`
	Collections []*CollectionAnalysis `json:"collections"`
	// Risks counts the risks of every collection.
	Risks    int      `json:"risks"`
	Warnings []string `json:"warnings,omitempty"`
}

// CollectionAnalysis is one collection's measurements and risks.
type CollectionAnalysis struct {
	Collection string `json:"collection"`
	Documents  int64  `json:"documents"`
	Total      int64  `json:"total"`
	Read       string `json:"read"`
	// Size is the documents' BSON size.
	Size SizeStats `json:"size"`
	// Arrays are the array fields, by path.
	Arrays []ArrayStats `json:"arrays"`
	// Sparse are the fields present in fewer than SparseBelow of their
	// parent documents.
	Sparse     []FieldPresence `json:"sparse"`
	MixedTypes []MixedType     `json:"mixedTypes"`
	// MaxDepth is the deepest nesting of embedded documents and arrays
	// (1: flat); MaxFields and MeanFields count every field at every
	// level of a document.
	MaxDepth   int     `json:"maxDepth"`
	MaxFields  int     `json:"maxFields"`
	MeanFields float64 `json:"meanFields"`
	// Versions counts the documents per value of the version field
	// (missing or null: 0).
	Versions []VersionCount `json:"versions"`
	Risks    []Risk         `json:"risks"`
}

// VersionCount is how many documents sit at one document version.
type VersionCount = bsonx.VersionCount

// SizeStats are quantiles of the documents' BSON sizes in bytes (within
// 2%), the maximum (exact), and the largest documents.
type SizeStats struct {
	P50     int64          `json:"p50"`
	P99     int64          `json:"p99"`
	Max     int64          `json:"max"`
	Largest []DocumentSize `json:"largest"`
}

// DocumentSize is one document's _id and BSON size.
type DocumentSize struct {
	ID    ExtJSON `json:"_id"`
	Bytes int64   `json:"bytes"`
}

// ArrayStats are the lengths of the arrays at one path.
type ArrayStats struct {
	Path   string `json:"path"`
	Arrays int64  `json:"arrays"`
	P50    int    `json:"p50"`
	P99    int    `json:"p99"`
	Max    int    `json:"max"`
	// AgeCorrelation is the correlation (-1 to 1) of the length with the
	// document's age, when the _ids are ObjectIds: near 1, older
	// documents hold longer arrays, the sign of an array that keeps
	// growing.
	AgeCorrelation *float64 `json:"ageCorrelation,omitempty"`
	// AgeRankCorrelation is Spearman's rank correlation of the same
	// (estimated from a sample of at most 2048 arrays): near 1 when the
	// length grows with age monotonically, linearly or not (the oldest
	// documents far longer than the rest).
	AgeRankCorrelation *float64 `json:"ageRankCorrelation,omitempty"`
}

// FieldPresence is how many of its parent documents hold a field.
type FieldPresence struct {
	Path    string  `json:"path"`
	Present int64   `json:"present"`
	Of      int64   `json:"of"`
	Percent float64 `json:"percent"`
}

// Kinds of [Risk].
const (
	RiskSize   = "size"   // documents approaching 16 MB
	RiskArray  = "array"  // an array far longer than its median
	RiskGrowth = "growth" // an array that grows with document age
	RiskMixed  = "mixed"  // a field with several types
)

// Risk is one design risk found in a collection.
type Risk struct {
	Kind    string `json:"kind"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// Analyze reads the collections of db (every document, or a sample) in
// one streaming pass each and measures what MongoDB schema design rules
// are about: document sizes against the 16 MB limit, array lengths and
// their growth, sparse fields, mixed types, nesting, and the version
// histogram. It only reads; memory does not grow with the documents.
func Analyze(ctx context.Context, db *mongo.Database, opts AnalyzeOptions) (*Analysis, error) {
	opts.defaults()
	names, err := inferTargets(ctx, db, opts.Collections)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Database: db.Name()}
	for _, name := range names {
		ca, warn, limits, err := analyzeCollection(ctx, db.Collection(name), opts)
		if err != nil {
			return nil, fmt.Errorf("analyze %s: %w", name, err)
		}
		if warn != "" && !slices.Contains(a.Warnings, warn) {
			a.Warnings = append(a.Warnings, warn)
		}
		a.Warnings = append(a.Warnings, limits...)
		a.Collections = append(a.Collections, ca)
		a.Risks += len(ca.Risks)
	}
	return a, nil
}

func analyzeCollection(ctx context.Context, coll *mongo.Collection, opts AnalyzeOptions) (*CollectionAnalysis, string, []string, error) {
	ca := &CollectionAnalysis{Collection: coll.Name()}
	total, err := estimate(ctx, coll, opts.Sample, opts.Progress != nil)
	if err != nil {
		return nil, "", nil, err
	}
	ca.Total = total
	cur, read, warn, err := openScan(ctx, coll, opts.Sample)
	if err != nil {
		return nil, "", nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	ca.Read = read
	col := &collector{root: newObjStats(), enumCap: 0, analyze: true}
	var sizes sizeHistogram
	top := largest{n: 3}
	var versions versionCounts
	var fieldSum int64
	for cur.Next(ctx) {
		raw := cur.Current
		if err := col.add(raw); err != nil {
			return nil, "", nil, fmt.Errorf("decode document %d: %w", ca.Documents+1, err)
		}
		ca.Documents++
		sizes.add(int64(len(raw)))
		top.add(raw.Lookup("_id"), int64(len(raw)))
		versions.add(raw, opts.VersionField)
		ca.MaxDepth, ca.MaxFields = max(ca.MaxDepth, col.depth), max(ca.MaxFields, col.fields)
		fieldSum += int64(col.fields)
		if opts.Progress != nil && ca.Documents%1000 == 0 {
			opts.Progress(ca.Collection, ca.Documents, max(total, ca.Documents))
		}
	}
	if err := cur.Err(); err != nil {
		return nil, "", nil, fmt.Errorf("read documents: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress(ca.Collection, ca.Documents, ca.Documents)
	}
	if ca.Read == ReadAll {
		ca.Total = ca.Documents
	}
	if ca.Documents > 0 {
		ca.MeanFields = float64(fieldSum) / float64(ca.Documents)
		ca.Size = SizeStats{P50: sizes.quantile(0.5), P99: sizes.quantile(0.99), Max: sizes.max, Largest: top.docs}
	}
	ca.Arrays, ca.Sparse = []ArrayStats{}, []FieldPresence{}
	walkFields(col.root, "", func(path string, f *fieldStats, parents int64) {
		if f.lens != nil {
			ca.Arrays = append(ca.Arrays, arrayStats(path, f))
		}
		if parents > 0 && float64(f.present) < opts.SparseBelow*float64(parents) {
			ca.Sparse = append(ca.Sparse, FieldPresence{Path: path, Present: f.present, Of: parents, Percent: 100 * float64(f.present) / float64(parents)})
		}
	})
	ca.MixedTypes = mixedTypes(col.root, "")
	if ca.MixedTypes == nil {
		ca.MixedTypes = []MixedType{}
	}
	ca.Versions = versions.list()
	ca.Risks = risks(ca, opts)
	return ca, warn, col.limitWarnings(ca.Collection), nil
}

// walkFields calls fn for every field path below o, depth first, with
// the fields' display paths; nothing below a map-like object, whose keys
// are data. (prefix is unused.)
func walkFields(o *objStats, prefix string, fn func(path string, f *fieldStats, parents int64)) {
	if o.mapLike() {
		return
	}
	for _, k := range o.order {
		f := o.fields[k]
		fn(f.path, f, o.count)
		walkValues(f, f.path, fn)
	}
}

func walkValues(f *fieldStats, path string, fn func(path string, f *fieldStats, parents int64)) {
	if f.object != nil {
		walkFields(f.object, path+".", fn)
	}
	if f.items != nil {
		if f.items.lens != nil {
			fn(f.items.path, f.items, 0)
		}
		walkValues(f.items, f.items.path, fn)
	}
}

func arrayStats(path string, f *fieldStats) ArrayStats {
	var n int64
	for _, c := range f.lens {
		n += c
	}
	s := ArrayStats{Path: path, Arrays: n, P50: f.quantile(0.5), P99: f.quantile(0.99)}
	_, _, s.Max = f.lengths()
	if r, ok := f.age.r(); ok {
		age := -r // age is minus the creation time
		s.AgeCorrelation = &age
	}
	if r, ok := f.ageRanks.r(); ok {
		age := -r
		s.AgeRankCorrelation = &age
	}
	return s
}
