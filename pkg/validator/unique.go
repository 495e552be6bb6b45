package validator

import (
	"hash/maphash"
	"math"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// pairwiseLimit is the array length up to which uniqueItems compares every
// pair (no allocation); longer arrays are hashed, as MongoDB keeps a hash
// set of the elements it has seen (findFirstDuplicateValue,
// src/mongo/db/matcher/schema/expression_internal_schema_unique_items.h).
const pairwiseLimit = 32

// firstDuplicate returns the index of the first item equal to an earlier one
// and the index of that earlier item, or -1, -1. It scans vals, the element
// bytes of an array, once.
func firstDuplicate(vals []byte) (int, int) {
	var items []bsoncore.Value
	var small [pairwiseLimit]bsoncore.Value
	items = small[:0]
	var seen map[uint64][]int
	for i := 0; ; i++ {
		e, rest, ok := bsoncore.ReadElement(vals)
		if !ok {
			return -1, -1
		}
		vals = rest
		item := e.Value()
		if seen == nil && i < pairwiseLimit {
			for j, prev := range items {
				if equal(item, prev) {
					return i, j
				}
			}
			items = append(items, item)
			continue
		}
		if seen == nil {
			seen = make(map[uint64][]int, 2*pairwiseLimit)
			items = append(make([]bsoncore.Value, 0, 4*pairwiseLimit), items...)
			for j, prev := range items {
				h := hashValue(prev)
				seen[h] = append(seen[h], j)
			}
		}
		h := hashValue(item)
		for _, j := range seen[h] {
			if equal(item, items[j]) {
				return i, j
			}
		}
		seen[h] = append(seen[h], i)
		items = append(items, item)
	}
}

var hashSeed = maphash.MakeSeed()

// hashValue is a hash consistent with equal: values equal under MongoDB's
// unordered-fields comparator hash alike.
func hashValue(v bsoncore.Value) uint64 {
	c := canonical(v.Type)
	h := mix(uint64(c + 1000))
	switch c {
	case -1, 0, 5, 127:
		return h
	case 10:
		return h ^ mix(math.Float64bits(numberHashKey(v)))
	case 20, 25:
		return h ^ hashDocument(v.Data)
	case 65:
		code, scope, ok := v.CodeWithScopeOK()
		if !ok {
			return h
		}
		return h ^ maphash.String(hashSeed, code) ^ mix(hashDocument(scope))
	}
	return h ^ maphash.Bytes(hashSeed, v.Data)
}

// numberHashKey maps equal numbers to the same float64: a long or decimal
// equal to a double converts to exactly that double; NaN and zero are
// normalised.
func numberHashKey(v bsoncore.Value) float64 {
	if isNaN(v) {
		return math.NaN()
	}
	var f float64
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64:
		i, _ := integer(v)
		f = float64(i)
	case bsoncore.TypeDouble:
		f = v.Double()
	default:
		if s := infSign(v); s != 0 {
			return math.Inf(s)
		}
		f, _ = exact(v).Float64()
	}
	if f == 0 {
		return 0
	}
	return f
}

// hashDocument sums its fields' hashes, so field order does not matter.
func hashDocument(doc []byte) uint64 {
	elems, ok := elementsOf(doc)
	if !ok {
		return 0
	}
	var sum uint64
	for {
		e, rest, ok := bsoncore.ReadElement(elems)
		if !ok {
			return sum
		}
		elems = rest
		sum += mix(maphash.Bytes(hashSeed, e.KeyBytes()) ^ hashValue(e.Value()))
	}
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
