package reshape

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// base is one place of a referencing document holding a reference and
// its copies: the document itself, a subdocument, or an element of an
// array of documents.
type base struct {
	at    string // the base's path ("" for the top; classes.2 for an element)
	doc   bson.Raw
	ref   bson.RawValue
	inArr bool
}

// basesOf lists doc's bases that hold a reference (not null) at the
// embed's via.
func basesOf(doc bson.Raw, e *migration.Embed) ([]base, error) {
	key, b := e.Copy.Key(), e.Copy.Base()
	var cands []base
	if b == "" {
		cands = []base{{doc: doc}}
	} else {
		v := doc.Lookup(splitPath(b)...)
		if d, ok := v.DocumentOK(); ok {
			cands = []base{{at: b, doc: d}}
		} else if arr, ok := v.ArrayOK(); ok {
			vals, err := arr.Values()
			if err != nil {
				return nil, err
			}
			for i, el := range vals {
				if d, ok := el.DocumentOK(); ok {
					cands = append(cands, base{at: b + "." + strconv.Itoa(i), doc: d, inArr: true})
				}
			}
		}
	}
	var out []base
	for _, c := range cands {
		ref, err := c.doc.LookupErr(splitPath(key)...)
		if err != nil || ref.Type == bson.TypeNull {
			continue
		}
		if ref.Type == bson.TypeArray {
			return nil, fmt.Errorf("%s _id %s: %s holds an array: an embed's via through an array names its elements' field (classes._id, with classes an array of documents); reshape the array of ids into documents first",
				e.Into, bsonx.ExtJSONOf(doc.Lookup("_id")), e.Copy.Via)
		}
		c.ref = ref
		out = append(out, c)
	}
	return out, nil
}

// refKey identifies a reference value as the server compares it: the
// numbers 1, 1L and 1.0 are one _id.
func refKey(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		f := 0.0
		switch v.Type {
		case bson.TypeInt32:
			f = float64(v.Int32())
		case bson.TypeInt64:
			f = float64(v.Int64())
		default:
			f = v.Double()
		}
		if !math.IsNaN(f) {
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return string(rune(v.Type)) + string(v.Value)
}

// embedUpdate computes the $set that fills doc's copies from src and the
// filter guarding it (rule 12): the document's _id and, for each base, the
// reference and the copies as read (for a base inside an array, the whole
// array). It returns how many of doc's references name no source.
func embedUpdate(e *migration.Embed, doc bson.Raw, src map[string]bson.Raw, arrays version.Arrays) (filter, set bson.D, dangling int, err error) {
	bs, err := basesOf(doc, e)
	if err != nil {
		return nil, nil, 0, err
	}
	filter = bson.D{{Key: "_id", Value: doc.Lookup("_id")}}
	arrGuarded := false
	for _, b := range bs {
		s := src[refKey(b.ref)]
		if s == nil {
			dangling++
		}
		if b.inArr && !arrGuarded {
			arrGuarded = true
			arr := doc.Lookup(splitPath(e.Copy.Base())...)
			filter = append(filter, guardValue(e.Copy.Base(), arr, arrays))
		} else if !b.inArr {
			filter = append(filter, guardValue(join(b.at, e.Copy.Key()), b.ref, arrays))
		}
		for _, f := range e.Copy.Fields {
			cur := b.doc.Lookup(splitPath(f.Path)...)
			if !b.inArr {
				filter = append(filter, guardValue(join(b.at, f.Path), cur, arrays))
			}
			if s == nil {
				continue
			}
			sv := s.Lookup(splitPath(f.From)...)
			if wants(e.Copy.Mode, cur, sv) {
				set = append(set, bson.E{Key: join(b.at, f.Path), Value: sv})
			}
		}
	}
	return filter, set, dangling, nil
}

// wants reports whether a copy holding cur (Type 0: absent) is written
// with the source's value sv: a snapshot only when absent, a mirror when
// it differs; a field the source lacks is never written (nor removed).
func wants(mode migration.CopyMode, cur, sv bson.RawValue) bool {
	if sv.Type == 0 {
		return false
	}
	if mode == migration.CopySnapshot {
		return cur.Type == 0
	}
	return cur.Type != sv.Type || !bytes.Equal(cur.Value, sv.Value)
}

// guardValue matches path holding v exactly as read (Type 0: absent): an
// array as version.SameArray says (never an array holding it as an
// element), any other value never inside an array (a query's equality
// also matches an array holding the value, or the array read as one of
// its elements: src/mongo/db/matcher/path.cpp, BSONElementIterator).
func guardValue(path string, v bson.RawValue, arrays version.Arrays) bson.E {
	switch v.Type {
	case 0:
		return bson.E{Key: path, Value: bson.D{{Key: "$exists", Value: false}}}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		seen := make(bson.A, len(vals))
		for i, x := range vals {
			seen[i] = x
		}
		if len(vals) == 0 {
			return bson.E{Key: path, Value: bson.D{{Key: "$size", Value: 0}}}
		}
		return bson.E{Key: path, Value: append(version.SameArray(seen, arrays), bson.E{Key: "$size", Value: len(vals)})}
	case bson.TypeNull:
		// {$eq: null} would also match a missing field.
		return bson.E{Key: path, Value: bson.D{{Key: "$type", Value: "null"}, notArray}}
	}
	return bson.E{Key: path, Value: bson.D{{Key: "$eq", Value: v}, notArray}}
}

func join(base, path string) string {
	if base == "" {
		return path
	}
	return base + "." + path
}

// notArray excludes a field holding an array.
var notArray = bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}

// holdsNothing matches an array field that holds nothing: missing, null
// or [], alike. {$in: [[], null]} alone also matches an array holding []
// or null as an element ([[]], [null, 3]: a query's equality compares a
// leaf array's elements too, src/mongo/db/matcher/path.cpp), which a
// writer may have made of it since the read. The exact form excludes
// every array with an element ($elemMatch tests each element once, as a
// value: src/mongo/db/matcher/expression_array.cpp). FerretDB v1
// (EqualArrays) applies $elemMatch's operators to the array itself
// (internal/handler/common/filter.go), so that form would refuse [] too;
// there the arrays holding null are excluded ($elemMatch {$type: "null"}
// is true of an array with a null element, false of []), and none holds
// [] (it stores no nested arrays). Both measured on the test servers.
func holdsNothing(arrays version.Arrays) bson.D {
	in := bson.E{Key: "$in", Value: bson.A{bson.A{}, nil}}
	if arrays == version.EqualArrays {
		return bson.D{in, {Key: "$not", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$type", Value: "null"}}}}}}
	}
	return bson.D{in, {Key: "$not", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$exists", Value: true}}}}}}
}
