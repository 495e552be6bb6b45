package validator

import (
	"bytes"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Documents and arrays are walked in place with next: no element slices,
// no key strings; a path string is built only for a failure.

// next reads the first of elems, the elements of a document or array that
// Validate checked: the key and the value, each read once (where
// bsoncore.ReadElement then KeyBytes and Value read the key three times).
func next(elems []byte) (key []byte, val bsoncore.Value, rest []byte, ok bool) {
	if len(elems) < 2 {
		return nil, bsoncore.Value{}, nil, false
	}
	end := bytes.IndexByte(elems[1:], 0) + 1
	if end == 0 {
		return nil, bsoncore.Value{}, nil, false
	}
	val, rest, ok = bsoncore.ReadValue(elems[end+1:], bsoncore.Type(elems[0]))
	return elems[1:end], val, rest, ok
}

func countElements(elems []byte) int64 {
	var n int64
	for {
		_, _, rest, ok := next(elems)
		if !ok {
			return n
		}
		n++
		elems = rest
	}
}

// hasField reports whether the document's elements hold a field named key.
func hasField(elems []byte, key string) bool {
	for {
		k, _, rest, ok := next(elems)
		if !ok {
			return false
		}
		if string(k) == key {
			return true
		}
		elems = rest
	}
}

func (v *validation) object(n *node, doc []byte) {
	elems, ok := elementsOf(doc)
	if !ok {
		return
	}
	if n.minProps >= 0 || n.maxProps >= 0 {
		count := countElements(elems)
		if n.minProps >= 0 && count < n.minProps {
			v.fail("minProperties", func() string { return fmt.Sprintf("must have at least %d fields, has %d", n.minProps, count) }, nil)
		}
		if n.maxProps >= 0 && count > n.maxProps {
			v.fail("maxProperties", func() string { return fmt.Sprintf("must have at most %d fields, has %d", n.maxProps, count) }, nil)
		}
	}
	// required is checked during the walk of the fields (up to 64 names;
	// more are looked up one by one), and its failures reported first.
	mark, few := len(v.failures), len(n.required) <= 64
	if !few {
		v.required(n.required, elems)
	}
	var found uint64
	for rest := elems; ; {
		key, val, after, ok := next(rest)
		if !ok {
			break
		}
		rest = after
		if few {
			for j, req := range n.required {
				if req == string(key) {
					found |= 1 << j
				}
			}
		}
		v.segs = append(v.segs, v.keySeg(key))
		v.field(n, doc, elems, key, val)
		v.segs = v.segs[:len(v.segs)-1]
	}
	if few && found != 1<<len(n.required)-1 {
		v.missing(n.required, found, mark)
	}
}

// required reports the names of list that elems lacks.
func (v *validation) required(list []string, elems []byte) {
	for _, req := range list {
		if !hasField(elems, req) {
			v.failAt(req, "required", func() string { return "is required but missing" }, nil)
		}
	}
}

// missing reports the names of list whose bit found lacks, before the
// failures reported since mark.
func (v *validation) missing(list []string, found uint64, mark int) {
	walked := len(v.failures)
	for j, req := range list {
		if found&(1<<j) == 0 {
			v.failAt(req, "required", func() string { return "is required but missing" }, nil)
		}
	}
	if walked > mark && len(v.failures) > walked {
		// Move the required failures before the fields' ones.
		req := append([]Failure(nil), v.failures[walked:]...)
		copy(v.failures[mark+len(req):], v.failures[mark:walked])
		copy(v.failures[mark:], req)
	}
}

// field applies properties, patternProperties, additionalProperties and
// dependencies to one field e of doc, whose elements are elems.
func (v *validation) field(n *node, doc, elems, key []byte, val bsoncore.Value) {
	covered := false
	for _, pr := range n.properties {
		if pr.name == string(key) {
			v.sub(n, pr.schema, val)
			covered = true
		}
	}
	for _, pp := range n.patterns {
		if pp.re.Match(key) {
			v.sub(n, pp.schema, val)
			covered = true
		}
	}
	if !covered {
		switch {
		case n.noAddl:
			v.fail("additionalProperties", func() string { return "is not allowed (additionalProperties: false)" }, &val)
		case n.addlProps != nil:
			v.sub(n, n.addlProps, val)
		}
	}
	if len(n.depFields) == 0 && len(n.depSchemas) == 0 {
		return
	}
	// Failures of dependencies are reported at the document, not the field.
	here := v.segs[len(v.segs)-1]
	v.segs = v.segs[:len(v.segs)-1]
	defer func() { v.segs = append(v.segs, here) }()
	if fields, ok := n.depFields[string(key)]; ok {
		for _, f := range fields {
			if !hasField(elems, f) {
				v.failAt(f, "dependencies", func() string { return fmt.Sprintf("is required when %q is present", key) }, nil)
			}
		}
	}
	if s, ok := n.depSchemas[string(key)]; ok {
		whole := bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}
		if !v.passes(n, s, whole) {
			v.fail("dependencies", func() string { return fmt.Sprintf("must match the schema required when %q is present", key) }, nil)
		}
	}
}

func (v *validation) array(n *node, arr []byte) {
	elems, ok := elementsOf(arr)
	if !ok {
		return
	}
	if n.minItems >= 0 || n.maxItems >= 0 {
		count := countElements(elems)
		if n.minItems >= 0 && count < n.minItems {
			v.fail("minItems", func() string { return fmt.Sprintf("must have at least %d items, has %d", n.minItems, count) }, nil)
		}
		if n.maxItems >= 0 && count > n.maxItems {
			v.fail("maxItems", func() string { return fmt.Sprintf("must have at most %d items, has %d", n.maxItems, count) }, nil)
		}
	}
	if n.items != nil || n.tuple {
		v.items(n, elems)
	}
	if n.uniqueItems {
		if i, j := firstDuplicate(elems); i >= 0 {
			item := valueAt(elems, i)
			v.segs = append(v.segs, seg{at: i, isIdx: true})
			v.fail("uniqueItems", func() string { return fmt.Sprintf("duplicates item %d (uniqueItems)", j) }, &item)
			v.segs = v.segs[:len(v.segs)-1]
		}
	}
}

// items applies items (a schema for every element, or a tuple of schemas
// by position) and additionalItems, which applies from the end of the
// tuple, from index 0 for items: [] (parseItems and parseAdditionalItems,
// src/mongo/db/matcher/schema/json_schema_parser.cpp).
func (v *validation) items(n *node, elems []byte) {
	for i, rest := 0, elems; ; i++ {
		_, item, after, ok := next(rest)
		if !ok {
			return
		}
		rest = after
		v.segs = append(v.segs, seg{at: i, isIdx: true})
		switch {
		case n.items != nil:
			v.sub(n, n.items, item)
		case i < len(n.itemList):
			v.sub(n, n.itemList[i], item)
		case n.noAddlItems:
			v.fail("additionalItems", func() string {
				return fmt.Sprintf("is not allowed: at most %d items (additionalItems: false)", len(n.itemList))
			}, &item)
		case n.addlItems != nil:
			v.sub(n, n.addlItems, item)
		}
		v.segs = v.segs[:len(v.segs)-1]
	}
}

func valueAt(elems []byte, i int) bsoncore.Value {
	for k := 0; ; k++ {
		_, val, rest, ok := next(elems)
		if !ok {
			return bsoncore.Value{}
		}
		if k == i {
			return val
		}
		elems = rest
	}
}
