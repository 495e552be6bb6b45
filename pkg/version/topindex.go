package version

import "go.mongodb.org/mongo-driver/v2/bson"

// maxTracked bounds the top-level names one upgrade chain may track; a
// chain that names more upgrades without an index (scanning per step).
const maxTracked = 32

// keyTable maps the top-level field names an upgrade chain's declarative
// steps name (and the version field) to slots. Built once per chain; a
// lookup costs a hash of three bytes and at most a string compare or two.
type keyTable struct {
	names []string
	table [128]int8 // slot+1 by hash, linear probing; 0 is empty
}

func keyHash(k string) int {
	return (len(k)*131 + int(k[0])*31 + int(k[len(k)-1])) & 127
}

// newKeyTable returns the table of names, nil when there are too many.
func newKeyTable(names []string) *keyTable {
	if len(names) > maxTracked {
		return nil
	}
	kt := &keyTable{names: names}
	for s, n := range names {
		h := keyHash(n)
		for kt.table[h] != 0 {
			h = (h + 1) & 127
		}
		kt.table[h] = int8(s + 1)
	}
	return kt
}

// slot returns key's slot, -1 when the chain does not name it.
func (kt *keyTable) slot(key string) int {
	if key == "" {
		return -1
	}
	for h := keyHash(key); kt.table[h] != 0; h = (h + 1) & 127 {
		if s := int(kt.table[h]) - 1; kt.names[s] == key {
			return s
		}
	}
	return -1
}

// topIndex holds, for the working copy of one document, where each name of
// its chain's keyTable is: built with one pass over the document when an
// upgrade starts, then kept up to date as steps remove and append
// top-level fields, so that no step scans the document to find a field.
// A nil *topIndex is valid: every lookup then scans.
type topIndex struct {
	kt  *keyTable
	pos [maxTracked]int32 // 1 + position in the document; 0: absent
	// holes: a removed top-level field left a tombstone (see remove).
	holes bool
}

// tombstone is the key of a removed field's place until compact: no BSON
// document holds it, since keys are NUL-terminated.
const tombstone = "\x00"

func (ix *topIndex) build(d bson.D) {
	ix.pos = [maxTracked]int32{}
	for i := range d {
		if s := ix.kt.slot(d[i].Key); s >= 0 && ix.pos[s] == 0 {
			ix.pos[s] = int32(i + 1) // the first of duplicate keys, as index does
		}
	}
}

// find returns the position of the top-level field key (slot s in the
// table, -1 if untracked) in d, -1 when absent.
func (ix *topIndex) find(d bson.D, s int, key string) int {
	if ix == nil || s < 0 {
		return index(d, key)
	}
	return int(ix.pos[s]) - 1
}

// remove removes d's top-level field at position at. With an index it
// leaves a tombstone, so no other field moves (positions stay valid) and
// compact closes the holes once, at the end; without one it shifts.
func (ix *topIndex) remove(d bson.D, at int) bson.D {
	if ix == nil {
		copy(d[at:], d[at+1:])
		d[len(d)-1] = bson.E{}
		return d[:len(d)-1]
	}
	if s := ix.kt.slot(d[at].Key); s >= 0 && int(ix.pos[s]) == at+1 {
		ix.pos[s] = 0
	}
	d[at] = bson.E{Key: tombstone}
	ix.holes = true
	return d
}

// compact closes the tombstones remove left, before d is handed to a func
// step or returned; positions must then be rebuilt.
func (ix *topIndex) compact(d bson.D) bson.D {
	if ix == nil || !ix.holes {
		return d
	}
	n := 0
	for i := range d {
		if d[i].Key == tombstone {
			continue
		}
		if n != i {
			d[n] = d[i]
		}
		n++
	}
	clear(d[n:])
	ix.holes = false
	return d[:n]
}

// appended records that d's last field is new, with slot s.
func (ix *topIndex) appended(d bson.D, s int) {
	if ix != nil && s >= 0 {
		ix.pos[s] = int32(len(d))
	}
}
