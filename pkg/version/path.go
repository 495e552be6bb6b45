package version

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// PathError is an update MongoDB would refuse for this document, such as
// setting a.b where a is a string.
type PathError struct {
	Path string
	Msg  string
}

func (e *PathError) Error() string { return fmt.Sprintf("path %q: %s", e.Path, e.Msg) }

func index(d bson.D, key string) int {
	for i := range d {
		if d[i].Key == key {
			return i
		}
	}
	return -1
}

// arrayIndex parses a path segment as an array index, as MongoDB does:
// digits only (leading zeros allowed). An index too large for any array
// saturates at maxIndex, so it is never found and always too far to pad.
func arrayIndex(seg string) (int, bool) {
	if !allDigits(seg) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(seg); i++ {
		n = n*10 + int(seg[i]-'0')
		if n > maxIndex {
			return maxIndex, true
		}
	}
	return n, true
}

const maxIndex = 1 << 30

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bson.A:
		return "an array"
	case bson.D:
		return "a document"
	}
	return fmt.Sprintf("a %s", bsonTypeName(v))
}

func bsonTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int32:
		return "int"
	case int64:
		return "long"
	case float64:
		return "double"
	case bool:
		return "bool"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", v), "bson.")
}

// get returns the value at path through embedded documents and, for
// numeric segments, array elements. It does not allocate.
func get(d bson.D, segs []string) (any, bool) {
	for n, seg := range segs {
		i := index(d, seg)
		if i < 0 {
			return nil, false
		}
		v := d[i].Value
		if n == len(segs)-1 {
			return v, true
		}
		switch t := v.(type) {
		case bson.D:
			d = t
		case bson.A:
			return getInArray(t, segs[n+1:])
		default:
			return nil, false
		}
	}
	return nil, false
}

func getInArray(a bson.A, segs []string) (any, bool) {
	i, ok := arrayIndex(segs[0])
	if !ok || i >= len(a) {
		return nil, false
	}
	if len(segs) == 1 {
		return a[i], true
	}
	switch t := a[i].(type) {
	case bson.D:
		return get(t, segs[1:])
	case bson.A:
		return getInArray(t, segs[1:])
	}
	return nil, false
}

// exists reports whether path exists with the semantics of the query
// {path: {$exists: true}}: through an array, a numeric segment indexes it
// and any other segment asks whether some element (a document) has it.
func exists(d bson.D, segs []string) bool { return existsAt(d, index(d, segs[0]), segs) }

// existsAt is exists with the position of segs[0] in d already known (-1:
// missing).
func existsAt(d bson.D, i int, segs []string) bool {
	return i >= 0 && existsIn(d[i].Value, segs[1:])
}

func existsIn(v any, segs []string) bool {
	if len(segs) == 0 {
		return true
	}
	switch n := v.(type) {
	case bson.D:
		return exists(n, segs)
	case bson.A:
		if i, ok := arrayIndex(segs[0]); ok && i < len(n) && existsIn(n[i], segs[1:]) {
			return true
		}
		for _, e := range n {
			if doc, isDoc := e.(bson.D); isDoc && exists(doc, segs) {
				return true
			}
		}
	}
	return false
}

// locateAt finds the source of a rename or copy as MongoDB's $rename does
// (src/mongo/db/update/rename_node.cpp, RenameNode::apply, on
// path_support.cpp findLongestPrefix): numeric segments index arrays; a
// path that stops at a missing field or past an array's end is a no-op
// (found false, no problem); a path that must go on through a scalar,
// null, or an array with a non-numeric segment is PathNotViable; a source
// that exists inside an array is refused ("The source field cannot be an
// array element"). The source itself may be an array. top is the
// position of segs[0] in d.
func locateAt(d bson.D, top int, segs []string) (v any, found bool, problem string) {
	if top < 0 {
		return nil, false, ""
	}
	return locateFrom(d[top].Value, segs)
}

// locateFrom is locate given the value of the top-level field segs[0].
func locateFrom(top any, segs []string) (v any, found bool, problem string) {
	var d bson.D
	var a bson.A
	inArray, crossed := false, false
	for n, seg := range segs {
		var next any
		switch {
		case n == 0:
			next = top
		case inArray:
			i, ok := arrayIndex(seg)
			if !ok {
				return nil, false, fmt.Sprintf("cannot use the part %q to traverse {%s: an array}", seg, segs[n-1])
			}
			if i >= len(a) {
				return nil, false, ""
			}
			next = a[i]
		default:
			i := index(d, seg)
			if i < 0 {
				return nil, false, ""
			}
			next = d[i].Value
		}
		if n == len(segs)-1 {
			if crossed {
				return nil, false, "cannot be an array element"
			}
			return next, true, ""
		}
		switch t := next.(type) {
		case bson.D:
			d, inArray = t, false
		case bson.A:
			a, inArray, crossed = t, true, true
		default:
			return nil, false, fmt.Sprintf("runs through {%s: %s}, which is not a document", seg, describeValue(t))
		}
	}
	return nil, false, ""
}

// allDigits reports whether seg is a non-empty string of ASCII digits,
// what path_support.cpp's isNumeric accepts as an array index.
func allDigits(seg string) bool {
	if seg == "" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

// maxPadding is MongoDB's cap on the nulls one update may add to an array
// (kMaxPaddingAllowed, src/mongo/db/update/path_support.h): maybePadTo in
// path_support.cpp refuses to pad more (CannotBackfillArray).
const maxPadding = 1500000

// crossesArray reports whether path goes through an array: $rename refuses
// such paths ("The source field cannot be an array element").
func crossesArray(d bson.D, segs []string) bool {
	return crossesArrayAt(d, index(d, segs[0]), segs)
}

// crossesArrayAt is crossesArray with the position of segs[0] in d known.
func crossesArrayAt(d bson.D, top int, segs []string) bool {
	return top >= 0 && crossesArrayFrom(d[top].Value, segs)
}

// crossesArrayFrom is crossesArray given the value of the existing
// top-level field segs[0].
func crossesArrayFrom(top any, segs []string) bool {
	if len(segs) == 1 {
		return false
	}
	switch t := top.(type) {
	case bson.D:
		return crossesArray(t, segs[1:])
	case bson.A:
		return true
	}
	return false
}

// set sets path in d like $set: missing embedded documents are created, an
// existing field keeps its place and a new one is appended, a numeric
// segment indexes an array (padding with nulls). d's own slice may be
// modified (the caller owns it); nested documents and arrays are copied
// before they change, so the caller's input is never modified.
func set(d bson.D, segs []string, v any, full string) (bson.D, error) {
	return setAt(d, index(d, segs[0]), segs, v, full)
}

// setAt is set with the position of segs[0] in d already known (-1:
// missing).
func setAt(d bson.D, i int, segs []string, v any, full string) (bson.D, error) {
	if len(segs) == 1 {
		if i >= 0 {
			d[i].Value = v
			return d, nil
		}
		return append(d, bson.E{Key: segs[0], Value: v}), nil
	}
	if i < 0 {
		child, err := set(bson.D{}, segs[1:], v, full)
		if err != nil {
			return d, err
		}
		return append(d, bson.E{Key: segs[0], Value: child}), nil
	}
	child, err := setIn(d[i].Value, segs[0], segs[1:], v, full)
	if err != nil {
		return d, err
	}
	d[i].Value = child
	return d, nil
}

func setIn(node any, key string, segs []string, v any, full string) (any, error) {
	switch n := node.(type) {
	case bson.D:
		return set(append(make(bson.D, 0, len(n)+1), n...), segs, v, full)
	case bson.A:
		idx, ok := arrayIndex(segs[0])
		if !ok {
			return nil, &PathError{full, fmt.Sprintf("cannot create field %q in element {%s: an array}", segs[0], key)}
		}
		if idx-len(n) > maxPadding {
			return nil, &PathError{full, fmt.Sprintf("index %s of {%s: an array of %d} would pad it with more than %d nulls, which MongoDB refuses (CannotBackfillArray)", segs[0], key, len(n), maxPadding)}
		}
		a := append(make(bson.A, 0, max(len(n), idx+1)), n...)
		for len(a) <= idx {
			a = append(a, nil)
		}
		if len(segs) == 1 {
			a[idx] = v
			return a, nil
		}
		if a[idx] == nil && idx >= len(n) {
			child, err := set(bson.D{}, segs[1:], v, full)
			a[idx] = child
			return a, err
		}
		child, err := setIn(a[idx], segs[0], segs[1:], v, full)
		a[idx] = child
		return a, err
	}
	return nil, &PathError{full, fmt.Sprintf("cannot create field %q in element {%s: %s}", segs[0], key, describeValue(node))}
}

// unset removes path like $unset: a missing path is a no-op, a numeric
// segment addressing an array element sets it to null. Ownership as set:
// d's own slice is modified in place.
func unset(d bson.D, segs []string) bson.D { return unsetAt(d, index(d, segs[0]), segs) }

// unsetAt is unset with the position of segs[0] in d already known.
func unsetAt(d bson.D, i int, segs []string) bson.D {
	if i < 0 {
		return d
	}
	if len(segs) == 1 {
		copy(d[i:], d[i+1:])
		d[len(d)-1] = bson.E{}
		return d[:len(d)-1]
	}
	if child, changed := unsetIn(d[i].Value, segs[1:]); changed {
		d[i].Value = child
	}
	return d
}

func unsetIn(node any, segs []string) (any, bool) {
	switch n := node.(type) {
	case bson.D:
		if _, ok := get(n, segs); !ok {
			return n, false
		}
		return unset(append(make(bson.D, 0, len(n)), n...), segs), true // copy: n is the caller's
	case bson.A:
		idx, ok := arrayIndex(segs[0])
		if !ok || idx >= len(n) {
			return n, false
		}
		a := append(make(bson.A, 0, len(n)), n...)
		if len(segs) == 1 {
			a[idx] = nil
			return a, true
		}
		child, changed := unsetIn(a[idx], segs[1:])
		a[idx] = child
		return a, changed
	}
	return node, false
}
