package version

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
)

// DiscardCount is what one step that can discard stored data
// ([migration.Discards]) would discard from the documents below its
// migration's version, counted on the documents as stored (a step earlier
// in their upgrade chain may change what it sees).
type DiscardCount struct {
	migration.Discard
	// Documents hold data the step would discard: for an unset, a value
	// other than null, an empty array or an empty document at the path;
	// for a set, a non-empty array or document other than the value set.
	Documents int64 `json:"documents"`
	// Arrays are the non-empty arrays among them and Elements their
	// elements; Objects the non-empty documents; the rest are scalars.
	Arrays   int64 `json:"arrays"`
	Elements int64 `json:"elements"`
	Objects  int64 `json:"objects"`
	// Server: the server counted (an aggregation); otherwise the documents
	// holding the field were read and counted here, where the server lacks
	// the aggregation operators ($isArray, $size, $type, $cond).
	Server bool `json:"server"`
}

// Discards reports whether the step would discard anything.
func (c DiscardCount) Discards() bool { return c.Documents > 0 }

// Summary says what the step would discard: "removes 47 non-empty
// comments arrays, 3,434 elements".
func (c DiscardCount) Summary() string {
	verb := "removes"
	if c.Op == migration.OpSet {
		verb = "replaces"
	}
	if !c.Discards() {
		return fmt.Sprintf("%s nothing: no document below version %d holds data at %s", verb, c.Migration, c.Path)
	}
	var parts []string
	if c.Arrays > 0 {
		parts = append(parts, fmt.Sprintf("%s non-empty %s %s, %s", Thousands(c.Arrays), c.Path, plural(c.Arrays, "array"), plural(c.Elements, Thousands(c.Elements)+" element")))
	}
	if c.Objects > 0 {
		parts = append(parts, fmt.Sprintf("%s non-empty %s %s", Thousands(c.Objects), c.Path, plural(c.Objects, "document")))
	}
	if n := c.Documents - c.Arrays - c.Objects; n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s %s", Thousands(n), c.Path, plural(n, "value")))
	}
	return verb + " " + strings.Join(parts, "; ")
}

func plural(n int64, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// Thousands writes n with a comma between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// CountDiscard counts what d would discard from the documents of coll
// below d's migration version (and with a valid version: an invalid one is
// never upgraded). The server counts with one aggregation where it can;
// where it refuses the aggregation, or the path has an array index (which
// aggregation paths do not follow), the documents holding the field are
// read, projected to it, and counted here with the steps' own path rules.
func (r *Registry) CountDiscard(ctx context.Context, coll *mongo.Collection, d migration.Discard) (DiscardCount, error) {
	segs := strings.Split(d.Path, ".")
	match := r.discardMatch(d.Migration, segs)
	c := DiscardCount{Discard: d}
	if !hasIndexSegment(segs) {
		ok, err := c.countOnServer(ctx, coll, match)
		if ok || err != nil {
			return c, err
		}
	}
	return c, c.countHere(ctx, coll, match, segs)
}

// discardMatch selects the documents below version v holding the path,
// no field containing it an array (for a path with an array index: holding
// its top-level field) (a step's unset or set of a.b does not
// reach into an array a through a name; an aggregation path would).
func (r *Registry) discardMatch(v int64, segs []string) bson.D {
	and := bson.A{r.VersionBelow(v), bson.D{{Key: "$nor", Value: bson.A{r.VersionInvalid()}}}}
	if hasIndexSegment(segs) {
		// Counted client-side: the top-level field is enough to read.
		return bson.D{{Key: "$and", Value: append(and, bson.D{{Key: segs[0], Value: bson.D{{Key: "$exists", Value: true}}}})}}
	}
	for i := 1; i < len(segs); i++ {
		and = append(and, bson.D{{Key: strings.Join(segs[:i], "."), Value: notArray}})
	}
	and = append(and, bson.D{{Key: strings.Join(segs, "."), Value: bson.D{{Key: "$exists", Value: true}}}})
	return bson.D{{Key: "$and", Value: and}}
}

func hasIndexSegment(segs []string) bool {
	for _, s := range segs {
		if allDigits(s) {
			return true
		}
	}
	return false
}

// countOnServer runs the aggregation; ok is false when the server refused
// it as a command (it lacks an operator): the caller counts client-side.
func (c *DiscardCount) countOnServer(ctx context.Context, coll *mongo.Collection, match bson.D) (ok bool, err error) {
	f := "$" + c.Path
	// $size of the array, or of [] for anything else: written so rather
	// than {$cond: [{$isArray}, {$size}, 0]}, which the DocumentDB engine
	// (FerretDB 2) evaluates in both branches, failing on a non-array
	// (DollarSizeRequiresArray); MongoDB evaluates only the branch taken.
	size := bson.D{{Key: "$size", Value: bson.D{{Key: "$cond", Value: bson.A{bson.D{{Key: "$isArray", Value: bson.A{f}}}, f, bson.D{{Key: "$literal", Value: bson.A{}}}}}}}}
	typ := bson.D{{Key: "$type", Value: f}}
	nonEmptyObj := bson.D{{Key: "$and", Value: bson.A{
		bson.D{{Key: "$eq", Value: bson.A{typ, "object"}}},
		bson.D{{Key: "$ne", Value: bson.A{f, bson.D{{Key: "$literal", Value: bson.D{}}}}}},
	}}}
	scalar := bson.D{{Key: "$not", Value: bson.A{bson.D{{Key: "$in", Value: bson.A{typ, bson.A{"missing", "null", "array", "object"}}}}}}}
	counts := func(b bson.D) bson.D {
		return bson.D{{Key: "$sum", Value: bson.D{{Key: "$cond", Value: bson.A{b, 1, 0}}}}}
	}
	arr := bson.D{{Key: "$gt", Value: bson.A{size, 0}}}
	held := bson.A{arr, nonEmptyObj}
	if c.Op == migration.OpUnset {
		held = append(held, scalar)
	}
	discards := bson.D{{Key: "$or", Value: held}}
	if c.Op == migration.OpSet {
		same := bson.D{{Key: "$eq", Value: bson.A{f, bson.D{{Key: "$literal", Value: c.Value}}}}}
		discards = bson.D{{Key: "$and", Value: bson.A{discards, bson.D{{Key: "$not", Value: bson.A{same}}}}}}
		arr = bson.D{{Key: "$and", Value: bson.A{arr, bson.D{{Key: "$not", Value: bson.A{same}}}}}}
		nonEmptyObj = bson.D{{Key: "$and", Value: bson.A{nonEmptyObj, bson.D{{Key: "$not", Value: bson.A{same}}}}}}
	}
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: nil},
			{Key: "documents", Value: counts(discards)},
			{Key: "arrays", Value: counts(arr)},
			{Key: "elements", Value: bson.D{{Key: "$sum", Value: bson.D{{Key: "$cond", Value: bson.A{arr, size, 0}}}}}},
			{Key: "objects", Value: counts(nonEmptyObj)},
		}}},
	}
	cur, err := coll.Aggregate(ctx, pipeline)
	if err != nil {
		var ce mongo.CommandError
		if errors.As(err, &ce) && ctx.Err() == nil {
			return false, nil
		}
		return false, fmt.Errorf("count what %s %s would discard in %s: %w", c.Op, c.Path, coll.Name(), err)
	}
	var rows []struct {
		Documents, Arrays, Elements, Objects int64
	}
	if err := cur.All(ctx, &rows); err != nil {
		var ce mongo.CommandError
		if errors.As(err, &ce) && ctx.Err() == nil {
			return false, nil
		}
		return false, fmt.Errorf("count what %s %s would discard in %s: %w", c.Op, c.Path, coll.Name(), err)
	}
	c.Server = true
	if len(rows) == 1 {
		c.Documents, c.Arrays, c.Elements, c.Objects = rows[0].Documents, rows[0].Arrays, rows[0].Elements, rows[0].Objects
	}
	return true, nil
}

// countHere reads the documents match selects, projected to the path's
// top-level field, and counts with the path rules the steps follow.
func (c *DiscardCount) countHere(ctx context.Context, coll *mongo.Collection, match bson.D, segs []string) error {
	cur, err := coll.Find(ctx, match, options.Find().SetProjection(bson.D{{Key: segs[0], Value: 1}}))
	if err != nil {
		return fmt.Errorf("count what %s %s would discard in %s: %w", c.Op, c.Path, coll.Name(), err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc bson.D
		if err := cur.Decode(&doc); err != nil {
			return fmt.Errorf("count what %s %s would discard in %s: %w", c.Op, c.Path, coll.Name(), err)
		}
		v, found := get(doc, segs)
		if found {
			c.add(v)
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("count what %s %s would discard in %s: %w", c.Op, c.Path, coll.Name(), err)
	}
	return nil
}

// add counts one stored value v at the path.
func (c *DiscardCount) add(v any) {
	if c.Op == migration.OpSet && sameValue(v, c.Value) {
		return
	}
	switch t := v.(type) {
	case nil, bson.Null, bson.Undefined:
	case bson.A:
		if len(t) > 0 {
			c.Documents++
			c.Arrays++
			c.Elements += int64(len(t))
		}
	case bson.D:
		if len(t) > 0 {
			c.Documents++
			c.Objects++
		}
	default:
		if c.Op == migration.OpUnset {
			c.Documents++
		}
	}
}
