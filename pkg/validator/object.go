package validator

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Documents and arrays are walked in place with bsoncore.ReadElement: no
// element slices, no key strings; a path string is built only for a
// failure.

func countElements(elems []byte) int64 {
	var n int64
	for {
		_, rest, ok := bsoncore.ReadElement(elems)
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
		e, rest, ok := bsoncore.ReadElement(elems)
		if !ok {
			return false
		}
		if string(e.KeyBytes()) == key {
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
	for _, req := range n.required {
		if !hasField(elems, req) {
			v.failAt(req, "required", func() string { return "is required but missing" }, nil)
		}
	}
	for rest := elems; ; {
		e, next, ok := bsoncore.ReadElement(rest)
		if !ok {
			return
		}
		rest = next
		v.segs = append(v.segs, seg{key: e.KeyBytes()})
		v.field(n, doc, elems, e)
		v.segs = v.segs[:len(v.segs)-1]
	}
}

// field applies properties, patternProperties, additionalProperties and
// dependencies to one field e of doc, whose elements are elems.
func (v *validation) field(n *node, doc, elems []byte, e bsoncore.Element) {
	key := e.KeyBytes()
	val := e.Value()
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
			v.segs = append(v.segs, seg{index: i, isIdx: true})
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
		e, next, ok := bsoncore.ReadElement(rest)
		if !ok {
			return
		}
		rest = next
		item := e.Value()
		v.segs = append(v.segs, seg{index: i, isIdx: true})
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
		e, rest, ok := bsoncore.ReadElement(elems)
		if !ok {
			return bsoncore.Value{}
		}
		if k == i {
			return e.Value()
		}
		elems = rest
	}
}
