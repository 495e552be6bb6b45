package version

import (
	"errors"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// referenceDelta is deltaOf written plainly, as it was before the delta
// was carved from one backing array: a fresh slice per list and guard.
func referenceDelta(before, after bson.D, links []link, arrays Arrays) (Delta, error) {
	id, ok := lookupD(before, "_id")
	if !ok {
		return Delta{}, ErrNoID
	}
	g := func(key string, old any, had bool) bson.E {
		switch {
		case !had:
			return bson.E{Key: key, Value: bson.D{{Key: "$exists", Value: false}}}
		case old == nil:
			return bson.E{Key: key, Value: bson.D{{Key: "$type", Value: "null"}, notArray[0]}}
		}
		if _, ok := old.(bson.A); ok {
			if arrays == EqualArrays {
				return bson.E{Key: key, Value: old}
			}
			return bson.E{Key: key, Value: bson.D{{Key: "$eq", Value: old}, {Key: "$not", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$eq", Value: old}}}}}}}
		}
		return bson.E{Key: key, Value: bson.D{{Key: "$eq", Value: old}, notArray[0]}}
	}
	filter := bson.D{{Key: "_id", Value: id}}
	var sets, unsets, update bson.D
	for _, e := range after {
		old, had := lookupD(before, e.Key)
		if had && sameValue(old, e.Value) {
			continue
		}
		if e.Key == "_id" {
			return Delta{}, errors.New("the upgrade changed _id")
		}
		sets = append(sets, e)
		filter = append(filter, g(e.Key, old, had))
	}
	for _, e := range before {
		if _, kept := lookupD(after, e.Key); !kept {
			unsets = append(unsets, bson.E{Key: e.Key, Value: ""})
			filter = append(filter, g(e.Key, e.Value, true))
		}
	}
	_, hadMarker := lookupD(before, MarkerField)
	_, hasMarker := lookupD(after, MarkerField)
	if !hadMarker && !hasMarker {
		filter = append(filter, g(MarkerField, nil, false))
	}
	if len(sets) > 0 {
		update = append(update, bson.E{Key: "$set", Value: sets})
	}
	if len(unsets) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unsets})
	}
	if len(update) == 0 {
		return Delta{Filter: filter}, nil
	}
	read := func(k string) {
		if k != "_id" && !hasKey(filter, k) {
			old, had := lookupD(before, k)
			filter = append(filter, g(k, old, had))
		}
	}
	all := false
	for _, l := range links {
		all = all || l.readsAll
		for _, k := range l.reads {
			read(k)
		}
	}
	if all {
		for _, e := range before {
			read(e.Key)
		}
	}
	return Delta{Filter: filter, Update: update}, nil
}

// deltaGen turns fuzz bytes into documents over a few keys (repeated keys,
// the marker and arrays included) and into the reads of upgrade links.
type deltaGen struct {
	data []byte
	i    int
}

func (g *deltaGen) next() int {
	if g.i >= len(g.data) {
		return 0
	}
	g.i++
	return int(g.data[g.i-1])
}

var deltaKeys = []string{"_id", "a", "b", "c", "version", MarkerField}

func (g *deltaGen) value() any {
	switch g.next() % 8 {
	case 0:
		return int32(g.next() % 3)
	case 1:
		return "s"
	case 2:
		return nil
	case 3:
		return bson.A{int32(g.next() % 2)}
	case 4:
		return bson.D{{Key: "x", Value: int32(g.next() % 2)}}
	case 5:
		return math.NaN()
	case 6:
		return int64(g.next() % 3)
	}
	return bson.D{}
}

func (g *deltaGen) doc() bson.D {
	var d bson.D
	for n := g.next() % 8; n > 0; n-- {
		d = append(d, bson.E{Key: deltaKeys[g.next()%len(deltaKeys)], Value: g.value()})
	}
	return d
}

func (g *deltaGen) links() []link {
	var ls []link
	for n := g.next() % 3; n > 0; n-- {
		l := link{readsAll: g.next()%4 == 0}
		for k := g.next() % 4; k > 0; k-- {
			l.reads = append(l.reads, deltaKeys[g.next()%len(deltaKeys)])
		}
		ls = append(ls, l)
	}
	return ls
}

// FuzzDeltaMatchesReference: the delta carved from one backing array is,
// field for field and in order, the one built plainly.
func FuzzDeltaMatchesReference(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0, 0, 1, 1, 0, 2, 0, 4, 0, 0, 1, 5, 1, 2, 3, 1, 2, 3, 4})
	f.Add([]byte{5, 0, 1, 1, 3, 2, 2, 3, 4, 4, 0, 6, 1, 5, 0, 2, 1, 2, 1, 3, 3, 4, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &deltaGen{data: data}
		before, after, links := g.doc(), g.doc(), g.links()
		if g.next()%2 == 0 && len(before) > 0 {
			after = append(bson.D{before[0]}, after...) // most upgrades keep _id
		}
		arrays := Arrays(g.next() % 2)
		got, err := deltaOf(before, after, links, arrays)
		want, wantErr := referenceDelta(before, after, links, arrays)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, reference %v", err, wantErr)
		}
		gf, _ := bson.MarshalExtJSON(bson.D{{Key: "f", Value: got.Filter}, {Key: "u", Value: got.Update}}, true, false)
		wf, _ := bson.MarshalExtJSON(bson.D{{Key: "f", Value: want.Filter}, {Key: "u", Value: want.Update}}, true, false)
		if string(gf) != string(wf) || got.Empty() != want.Empty() {
			t.Fatalf("before %v after %v links %v:\n got  %s\n want %s", before, after, links, gf, wf)
		}
	})
}
