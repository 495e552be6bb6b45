package inspect

import (
	"math"
	"sort"

	"github.com/mongomig/mongomig/internal/bsonx"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// correlation is Pearson's correlation of two series, kept with
// Welford's online updates: memory does not grow with the series, and
// large values (Unix times) lose no precision to cancellation.
type correlation struct {
	n, meanX, meanY, m2x, m2y, cxy float64
}

func (c *correlation) add(x, y float64) {
	c.n++
	dx, dy := x-c.meanX, y-c.meanY
	c.meanX += dx / c.n
	c.meanY += dy / c.n
	c.m2x += dx * (x - c.meanX)
	c.m2y += dy * (y - c.meanY)
	c.cxy += dx * (y - c.meanY)
}

// r returns the correlation, and false when it is undefined (fewer than
// 3 points, or a constant series).
func (c *correlation) r() (float64, bool) {
	if c == nil || c.n < 3 || c.m2x <= 0 || c.m2y <= 0 {
		return 0, false
	}
	return c.cxy / math.Sqrt(c.m2x*c.m2y), true
}

// sizeHistogram counts document sizes in buckets 2% wide, so quantiles
// cost a bounded amount of memory (at most ~850 buckets up to 16 MB) and
// are exact to within 2%.
type sizeHistogram struct {
	buckets map[int]int64
	n       int64
	max     int64
}

const sizeBucketRatio = 1.02

func sizeBucket(size int64) int {
	if size <= 1 {
		return 0
	}
	return int(math.Ceil(math.Log(float64(size)) / math.Log(sizeBucketRatio)))
}

func (h *sizeHistogram) add(size int64) {
	if h.buckets == nil {
		h.buckets = map[int]int64{}
	}
	h.buckets[sizeBucket(size)]++
	h.n++
	h.max = max(h.max, size)
}

// quantile returns an upper bound, within 2%, of the size below which
// the fraction q of the documents are (never more than the maximum).
func (h *sizeHistogram) quantile(q float64) int64 {
	keys := make([]int, 0, len(h.buckets))
	for b := range h.buckets {
		keys = append(keys, b)
	}
	sort.Ints(keys)
	var seen int64
	for _, b := range keys {
		seen += h.buckets[b]
		if float64(seen) >= q*float64(h.n) {
			return min(int64(math.Ceil(math.Pow(sizeBucketRatio, float64(b)))), h.max)
		}
	}
	return h.max
}

// largest keeps the n largest documents' _ids and sizes.
type largest struct {
	n    int
	docs []DocumentSize
}

func (l *largest) add(id bson.RawValue, size int64) {
	if len(l.docs) == l.n && size <= l.docs[len(l.docs)-1].Bytes {
		return
	}
	d := DocumentSize{ID: safeID(id), Bytes: size}
	i := sort.Search(len(l.docs), func(i int) bool { return l.docs[i].Bytes < size })
	l.docs = append(l.docs, DocumentSize{})
	copy(l.docs[i+1:], l.docs[i:])
	l.docs[i] = d
	if len(l.docs) > l.n {
		l.docs = l.docs[:l.n]
	}
}

// versionCounts counts documents per version (missing or null: 0); a
// value that is no whole number >= 0 is counted as invalid, up to
// maxVersions distinct ones (the rest together under "...").
type versionCounts struct {
	versions map[int64]int64
	invalid  map[string]int64
}

const maxVersions = 100

func (v *versionCounts) add(doc bson.Raw, field string) {
	if v.versions == nil {
		v.versions, v.invalid = map[int64]int64{}, map[string]int64{}
	}
	rv, err := doc.LookupErr(field)
	if err != nil || rv.Type == bson.TypeNull {
		v.versions[0]++
		return
	}
	var n int64
	ok := false
	switch rv.Type {
	case bson.TypeInt32:
		n, ok = int64(rv.Int32()), true
	case bson.TypeInt64:
		n, ok = rv.Int64(), true
	case bson.TypeDouble:
		n, ok = wholeNumber(rv.Double())
	}
	if ok && n >= 0 {
		v.versions[n]++
		return
	}
	key := string(bsonx.ExtJSONOf(rv))
	if _, seen := v.invalid[key]; !seen && len(v.invalid) >= maxVersions {
		key = `"..."`
	}
	v.invalid[key]++
}

func (v *versionCounts) list() []VersionCount {
	out := []VersionCount{}
	for k, c := range v.versions {
		out = append(out, VersionCount{Version: k, Count: c})
	}
	for k, c := range v.invalid {
		out = append(out, VersionCount{Invalid: ExtJSON(k), Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Invalid != out[j].Invalid {
			return out[i].Invalid < out[j].Invalid
		}
		return out[i].Version < out[j].Version
	})
	return out
}
