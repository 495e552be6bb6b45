package inspect

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// wide is document i of a hostile case: 500 fields under a new
// two-level parent each (p<i%64>.q<i/64>), so that distinct paths grow
// with the documents.
func wide(i int) bson.D {
	inner := make(bson.D, 0, 500)
	for j := 0; j < 500; j++ {
		inner = append(inner, bson.E{Key: fmt.Sprintf("f%d", j), Value: int32(j)})
	}
	return bson.D{{Key: "_id", Value: int32(i)},
		{Key: fmt.Sprintf("p%d", i%64), Value: bson.D{{Key: fmt.Sprintf("q%d", i/64), Value: inner}}}}
}

// TestInitPathBudget: the statistics track at most the
// budget of paths whatever the documents hold (the same for 400 and 2,000
// documents whose paths are all new), the objects past it become dynamic
// with a warning naming them, and the file lints. Memory is bounded by
// the entries kept, counted exactly (objEntries).
func TestInitPathBudget(t *testing.T) {
	entries := map[int]int{}
	for _, n := range []int{400, 2000} {
		docs := make([]bson.D, n)
		for i := range docs {
			docs[i] = wide(i)
		}
		inf := inferDocs(t, InferOptions{}, map[string][]bson.D{"wide": docs})
		col := inf.stats["wide"]
		entries[n] = objEntries(col.root)
		if col.paths != defaultMaxPaths {
			t.Errorf("%d documents: %d paths tracked, want the budget %d", n, col.paths, defaultMaxPaths)
		}
		if entries[n] > 4*defaultMaxPaths {
			t.Errorf("%d documents: statistics keep %d entries for a budget of %d paths", n, entries[n], defaultMaxPaths)
		}
		if len(inf.Warnings) != 1 || !strings.Contains(inf.Warnings[0], "wide: more than 1000 distinct field paths") ||
			!strings.Contains(inf.Warnings[0], "p1.q0, (the top-level document)") {
			t.Errorf("%d documents: warnings = %q", n, inf.Warnings)
		}
		if file := lintClean(t, inf); len(file) > 4096 {
			t.Errorf("%d documents: a %d-byte file", n, len(file))
		}
	}
	if entries[400] != entries[2000] {
		t.Errorf("entries kept: %v: they grow with the documents", entries)
	}
}

// TestInitAnalyzeCountsPastBudget: fields left untracked are still
// counted (analyze's field counts and depth stay whole).
func TestInitAnalyzeCountsPastBudget(t *testing.T) {
	col := &collector{root: newObjStats(), analyze: true, maxPaths: 10}
	raw, _ := bson.Marshal(wide(0))
	if err := col.add(raw); err != nil {
		t.Fatal(err)
	}
	if col.fields != 503 || col.depth != 3 || col.paths != 10 {
		t.Errorf("fields %d, depth %d, paths %d; want 503, 3, 10", col.fields, col.depth, col.paths)
	}
}

// nested is a document nested n levels deep: {a: {a: ... {leaf: 1}}}.
func nested(id, n int) bson.D {
	d := bson.D{{Key: "leaf", Value: int32(1)}}
	for i := 0; i < n-2; i++ {
		d = bson.D{{Key: "a", Value: d}}
	}
	return bson.D{{Key: "_id", Value: int32(id)}, {Key: "a", Value: d}}
}

// TestInitFileLintsHostileShapes: what used to give a
// file init's own lint refuses — 99 levels deep, a collection name with
// control characters, $oid and $date as field names (also in examples),
// field names with newlines — gives a file that lints, with warnings for
// what was left out.
func TestInitFileLintsHostileShapes(t *testing.T) {
	dollar := []bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "meta", Value: bson.D{{Key: "$oid", Value: "x"}, {Key: "$date", Value: int32(3)}}}},
		{{Key: "_id", Value: int32(2)}, {Key: "meta", Value: bson.D{{Key: "$oid", Value: "y"}}}, {Key: "$date", Value: "z"}},
	}
	colls := map[string][]bson.D{
		"deep":         {nested(1, 99), nested(2, 40)},
		"dollar":       dollar,
		"ctl\x1b[31mx": {{{Key: "_id", Value: int32(1)}}},
		"names":        {{{Key: "_id", Value: int32(1)}, {Key: "a\nb: 1 # forged", Value: int32(2)}, {Key: "ok", Value: bson.D{{Key: "x\ry", Value: true}}}}},
	}
	inf := inferDocs(t, InferOptions{Examples: 2}, colls)
	file := lintClean(t, inf)
	for _, never := range []string{"\x1b", "\nb: 1", "\ry", "$oid", "$date"} {
		if strings.Contains(file, never) {
			t.Errorf("the file holds %q:\n%s", never, file)
		}
	}
	warnings := strings.Join(inf.Warnings, "\n")
	for _, want := range []string{
		`"ctl\x1b[31mx" is left out of the baseline: the migration file format cannot hold it`,
		"deep: documents nested deeper than 20 levels; below that the schema is bsonType object only: a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a",
		"dollar: the examples are left out of the baseline",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
}
