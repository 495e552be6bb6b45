package inspect

import (
	"fmt"
	"runtime"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/validator"
)

// TestInferNestedArrays: arrays of arrays (which the sandbox cannot
// store) get items of items, the union of every level's types, and the
// schema accepts every document it was inferred from.
func TestInferNestedArrays(t *testing.T) {
	docs := []bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "m", Value: bson.A{bson.A{int32(1), int32(2)}, bson.A{}}}},
		{{Key: "_id", Value: int32(2)}, {Key: "m", Value: bson.A{bson.A{"x"}, bson.A{bson.A{true}}}}},
		{{Key: "_id", Value: int32(3)}, {Key: "m", Value: bson.A{}}},
		{{Key: "_id", Value: int32(4)}},
	}
	col := &collector{root: newObjStats(), enumCap: DefaultEnumMax}
	for _, d := range docs {
		raw, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := col.add(raw); err != nil {
			t.Fatal(err)
		}
	}
	schema := schemaOfObject(col.root, DefaultEnumMax, true)
	got := string(schemaExtJSON(schema))
	want := `{"bsonType":"object","required":["_id"],"properties":{"_id":{"bsonType":["int","long","double"]},` +
		`"m":{"bsonType":"array","items":{"bsonType":"array","items":{"bsonType":["int","long","double","array","string"],"items":{"bsonType":"bool"}}}}}}`
	if got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
	compiled, err := validator.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if f := compiled.ValidateD(d); len(f) != 0 {
			t.Errorf("%v fails its own schema: %v", d, f)
		}
	}
	mixed := mixedTypes(col.root, "")
	if len(mixed) != 1 || mixed[0].Path != "m[][]" || len(mixed[0].Types) != 3 {
		t.Errorf("mixed = %+v", mixed)
	}
}

// TestInferMemoryIsBoundedBySchema: the statistics kept for 200,000
// documents are the same size as for 20,000: they grow with the distinct
// field paths, lengths and small enums, not with the documents. The
// entries kept are counted exactly; the heap they retain is measured too
// (loosely: the garbage collector's figures are noisy).
func TestInferMemoryIsBoundedBySchema(t *testing.T) {
	measure := func(n int) (entries int, heap uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		col := &collector{root: newObjStats(), enumCap: DefaultEnumMax, analyze: true}
		for i := 0; i < n; i++ {
			raw, _ := bson.Marshal(generated(i))
			if err := col.add(raw); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		entries = objEntries(col.root)
		runtime.KeepAlive(col)
		return entries, after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	}
	smallN, smallHeap := measure(20_000)
	largeN, largeHeap := measure(200_000)
	t.Logf("statistics: %d entries, %d bytes retained for 20k documents; %d entries, %d bytes for 200k", smallN, smallHeap, largeN, largeHeap)
	if largeN != smallN {
		t.Errorf("statistics keep %d entries for 200k documents, %d for 20k: they grow with the documents", largeN, smallN)
	}
	if largeHeap > 2*smallHeap+1<<20 {
		t.Errorf("statistics for 200k documents retain %d bytes, for 20k %d", largeHeap, smallHeap)
	}
}

// objEntries counts the entries the statistics of o keep: field nodes,
// type counters, example _ids, enum values and array lengths.
func objEntries(o *objStats) int {
	n := 0
	for _, f := range o.fields {
		n += fieldEntries(f)
	}
	return n
}

func fieldEntries(f *fieldStats) int {
	n := 1 + len(f.types) + len(f.strs) + len(f.lens)
	for _, ex := range f.examples {
		n += len(ex)
	}
	if f.object != nil {
		n += objEntries(f.object)
	}
	if f.items != nil {
		n += fieldEntries(f.items)
	}
	return n
}

// generated is document i of a collection with free text, a small enum,
// an optional field, mixed types and arrays of documents.
func generated(i int) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "note", Value: fmt.Sprintf("free text %d", i)},
		{Key: "status", Value: []string{"new", "open", "closed"}[i%3]},
		{Key: "lines", Value: bson.A{bson.D{{Key: "qty", Value: int32(i % 7)}}, bson.D{{Key: "qty", Value: int64(i)}}}},
	}
	if i%5 == 0 {
		d = append(d, bson.E{Key: "price", Value: fmt.Sprint(i)})
	} else {
		d = append(d, bson.E{Key: "price", Value: float64(i)})
	}
	return d
}

// TestCorrelationKeepsPrecision: Unix times a second apart correlate
// exactly with a series that follows them (no cancellation).
func TestCorrelationKeepsPrecision(t *testing.T) {
	var c correlation
	for i := 0; i < 1000; i++ {
		c.add(1.7e9+float64(i), float64(1000-i))
	}
	if r, ok := c.r(); !ok || r > -0.999999 {
		t.Errorf("r = %v, %v; want -1", r, ok)
	}
	var flat correlation
	for i := 0; i < 5; i++ {
		flat.add(float64(i), 3)
	}
	if _, ok := flat.r(); ok {
		t.Error("a constant series has a correlation")
	}
}
