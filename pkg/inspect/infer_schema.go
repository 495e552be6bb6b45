package inspect

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/migration"
)

// schemaBuilder turns statistics into a $jsonSchema, counting what of
// it came from the documents' data: enums (and their values) and
// property names.
type schemaBuilder struct {
	enumMax                     int
	enums, enumValues, propKeys int
}

// schemaOfObject is the $jsonSchema of the documents o describes:
// bsonType object, properties for each field, required for those present
// in every one. root adds nothing speculative either; it only keeps _id
// out of enums.
func schemaOfObject(o *objStats, enumMax int, root bool) bson.D {
	b := &schemaBuilder{enumMax: enumMax}
	return b.object(o, false)
}

// object is the schema of the documents o describes; under a sensitive
// name, no enum anywhere below. A map-like object (see mapLike) is
// bsonType object alone: its keys are data.
func (b *schemaBuilder) object(o *objStats, sensitive bool) bson.D {
	d := bson.D{{Key: "bsonType", Value: "object"}}
	if o.mapLike() || len(o.order) == 0 {
		return d
	}
	var required bson.A
	props := bson.D{}
	for _, k := range o.order {
		f := o.fields[k]
		if f.present == o.count {
			required = append(required, k)
		}
		b.propKeys++
		props = append(props, bson.E{Key: k, Value: b.field(f, sensitive || sensitiveName(k))})
	}
	if len(required) > 0 {
		d = append(d, bson.E{Key: "required", Value: required})
	}
	return append(d, bson.E{Key: "properties", Value: props})
}

// field is the $jsonSchema of the values f describes: numbers as the
// number family (numberFamily), enums only for labels seen often enough
// (enumValues) under a name that is not sensitive.
func (b *schemaBuilder) field(f *fieldStats, sensitive bool) bson.D {
	names := numberFamily(f.typeNames())
	var d bson.D
	if len(names) == 1 {
		d = bson.D{{Key: "bsonType", Value: names[0]}}
	} else {
		list := make(bson.A, len(names))
		for i, n := range names {
			list[i] = n
		}
		d = bson.D{{Key: "bsonType", Value: list}}
	}
	if f.object != nil {
		obj := b.object(f.object, sensitive)
		d = append(d, obj[1:]...) // all but bsonType
	}
	if f.items != nil && f.items.present > 0 {
		d = append(d, bson.E{Key: "items", Value: b.field(f.items, sensitive)})
	}
	if !sensitive {
		if vals := f.enumValues(b.enumMax); vals != nil {
			list := make(bson.A, len(vals))
			for i, v := range vals {
				list[i] = v
			}
			d = append(d, bson.E{Key: "enum", Value: list})
			b.enums++
			b.enumValues += len(vals)
		}
	}
	return d
}

// indexOptionsKept are the listIndexes fields the file format declares
// (or that need no declaration).
var indexOptionsKept = []string{"v", "key", "name", "ns", "unique", "sparse", "hidden", "expireAfterSeconds",
	"partialFilterExpression", "collation", "2dsphereIndexVersion"}

// existingIndexes lists coll's indexes except _id_, as the file format
// declares them; the ones it cannot declare are returned as skipped.
func existingIndexes(ctx context.Context, coll *mongo.Collection) ([]migration.Index, []SkippedIndex, error) {
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list indexes: %w", err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var out []migration.Index
	var skipped []SkippedIndex
	for cur.Next(ctx) {
		var spec bson.D
		if err := bson.Unmarshal(cur.Current, &spec); err != nil {
			return nil, nil, fmt.Errorf("decode index: %w", err)
		}
		idx, reason := indexFromSpec(spec)
		switch {
		case idx.Name == "_id_":
		case reason != "":
			skipped = append(skipped, SkippedIndex{Name: idx.Name, Reason: reason})
		default:
			out = append(out, idx)
		}
	}
	if err := cur.Err(); err != nil {
		return nil, nil, fmt.Errorf("list indexes: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped, nil
}

// indexFromSpec turns a listIndexes entry into an index declaration, or
// says why it cannot be declared.
func indexFromSpec(spec bson.D) (migration.Index, string) {
	var idx migration.Index
	var unknown []string
	for _, e := range spec {
		switch e.Key {
		case "name":
			idx.Name, _ = e.Value.(string)
		case "key":
			keys, ok := e.Value.(bson.D)
			if !ok {
				return idx, "its key is not a document"
			}
			for _, k := range keys {
				v, why := indexDirection(k.Value)
				if why != "" {
					return idx, fmt.Sprintf("key %s: %s", k.Key, why)
				}
				idx.Keys = append(idx.Keys, bson.E{Key: k.Key, Value: v})
			}
		case "unique":
			idx.Unique = truthy(e.Value)
		case "sparse":
			idx.Sparse = truthy(e.Value)
		case "hidden":
			idx.Hidden = truthy(e.Value)
		case "expireAfterSeconds":
			s, ok := wholeNumber(e.Value)
			if !ok {
				return idx, "expireAfterSeconds is not a whole number"
			}
			idx.ExpireAfterSeconds = &s
		case "partialFilterExpression":
			idx.PartialFilterExpression, _ = e.Value.(bson.D)
		case "collation":
			idx.Collation, _ = e.Value.(bson.D)
		default:
			if !slices.Contains(indexOptionsKept, e.Key) {
				unknown = append(unknown, e.Key)
			}
		}
	}
	if len(unknown) > 0 {
		return idx, fmt.Sprintf("options the migration file format cannot declare: %s", strings.Join(unknown, ", "))
	}
	return idx, ""
}

// indexDirection is a key's direction as the file writes it: 1, -1, or
// an index type name.
func indexDirection(v any) (any, string) {
	if s, ok := v.(string); ok {
		if s == "text" {
			return nil, "text indexes (with their weights) cannot be declared"
		}
		if s == "2dsphere" || s == "2d" || s == "hashed" {
			return s, ""
		}
		return nil, fmt.Sprintf("index type %q cannot be declared", s)
	}
	if n, ok := wholeNumber(v); ok && (n == 1 || n == -1) {
		return int32(n), ""
	}
	return nil, fmt.Sprintf("direction %v cannot be declared (only 1 and -1)", v)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int32, int64, float64:
		n, _ := wholeNumber(x)
		return n != 0
	}
	return false
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}
