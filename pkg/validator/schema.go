package validator

import (
	"fmt"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// node is a compiled (sub)schema, ready to validate BSON values.
type node struct {
	// path is the JSON pointer of this (sub)schema, named when validation
	// fails unexpectedly; id its index in Schema.nodes.
	path string
	id   int

	types     typeSet // bsonType or type; 0: any
	typeRule  string  // "bsonType" or "type"
	typeNames []string

	required   []string
	properties []prop
	patterns   []patternProp
	addlProps  *node // additionalProperties schema
	noAddl     bool  // additionalProperties: false
	minProps   int64
	maxProps   int64

	enum []bsoncore.Value

	minimum, maximum      *bsoncore.Value // exact bounds, compared as MongoDB's $gte/$lte
	exclusiveMin, exclMax bool
	multipleOf            *big.Rat // the divisor as MongoDB's Decimal128 holds it
	minLength, maxLength  int64
	pattern               *pattern
	patternSrc            string
	items                 *node
	itemList              []*node
	tuple                 bool // items is an array (possibly empty): additionalItems applies
	addlItems             *node
	noAddlItems           bool
	minItems, maxItems    int64
	uniqueItems           bool
	depFields             map[string][]string
	depSchemas            map[string]*node
	allOf, anyOf, oneOf   []*node
	not                   *node
}

type prop struct {
	name   string
	schema *node
}

type patternProp struct {
	re     *pattern
	schema *node
}

// typeSet is a bit set of BSON types.
type typeSet uint64

// bit maps a BSON type to its bit. Types are 0x01-0x13 except MinKey
// (0xFF) and MaxKey (0x7F), which would not fit in 64 bits as shifts.
func bit(t bsoncore.Type) typeSet {
	switch t {
	case bsoncore.TypeMinKey:
		return 1 << 62
	case bsoncore.TypeMaxKey:
		return 1 << 63
	}
	return 1 << (uint(t) & 0x3f)
}

var numberTypes = bit(bsoncore.TypeInt32) | bit(bsoncore.TypeInt64) | bit(bsoncore.TypeDouble) | bit(bsoncore.TypeDecimal128)

var bsonTypeBits = map[string]typeSet{
	"double": bit(bsoncore.TypeDouble), "string": bit(bsoncore.TypeString), "object": bit(bsoncore.TypeEmbeddedDocument),
	"array": bit(bsoncore.TypeArray), "binData": bit(bsoncore.TypeBinary), "undefined": bit(bsoncore.TypeUndefined),
	"objectId": bit(bsoncore.TypeObjectID), "bool": bit(bsoncore.TypeBoolean), "date": bit(bsoncore.TypeDateTime),
	"null": bit(bsoncore.TypeNull), "regex": bit(bsoncore.TypeRegex), "dbPointer": bit(bsoncore.TypeDBPointer),
	"javascript": bit(bsoncore.TypeJavaScript), "symbol": bit(bsoncore.TypeSymbol),
	"javascriptWithScope": bit(bsoncore.TypeCodeWithScope), "int": bit(bsoncore.TypeInt32),
	"timestamp": bit(bsoncore.TypeTimestamp), "long": bit(bsoncore.TypeInt64), "decimal": bit(bsoncore.TypeDecimal128),
	"minKey": bit(bsoncore.TypeMinKey), "maxKey": bit(bsoncore.TypeMaxKey), "number": numberTypes,
}

var jsonTypeBits = map[string]typeSet{
	"object": bit(bsoncore.TypeEmbeddedDocument), "array": bit(bsoncore.TypeArray), "number": numberTypes,
	"boolean": bit(bsoncore.TypeBoolean), "string": bit(bsoncore.TypeString), "null": bit(bsoncore.TypeNull),
}

// number gives every node below root, root included, its id: its index in
// the list returned, whose entry 0 is nil (no node).
func number(root *node) []*node {
	list := []*node{nil}
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		n.id = len(list)
		list = append(list, n)
		for _, p := range n.properties {
			walk(p.schema)
		}
		for _, p := range n.patterns {
			walk(p.schema)
		}
		for _, d := range n.depSchemas {
			walk(d)
		}
		for _, subs := range [][]*node{n.itemList, n.allOf, n.anyOf, n.oneOf, {n.addlProps, n.items, n.addlItems, n.not}} {
			for _, sub := range subs {
				walk(sub)
			}
		}
	}
	walk(root)
	return list
}

// build compiles a checked schema tree (see dialect) into nodes. It is only
// called on schemas the dialect and meta-schema checks accepted; a value of
// an unexpected type still becomes an error, never a panic.
func build(v any, path string) (n *node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("%s: unexpected schema value: %v", pointer(path), r)
		}
	}()
	return buildNode(v, path)
}

func pointer(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func buildNode(v any, path string) (*node, error) {
	obj, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object, found %s", pointer(path), describe(v))
	}
	n := &node{path: path, minProps: -1, maxProps: -1, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	for _, kv := range obj.pairs {
		if err := n.keyword(kv.key, kv.value, path+"/"+escape(kv.key)); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *node) keyword(key string, v any, path string) error {
	if handled, err := n.subschemas(key, v, path); handled {
		return err
	}
	switch key {
	case "bsonType", "type":
		table := bsonTypeBits
		if key == "type" {
			table = jsonTypeBits
		}
		n.typeRule = key
		for _, name := range names(v) {
			n.types |= table[name]
			n.typeNames = append(n.typeNames, name)
		}
	case "required":
		for _, f := range v.([]any) {
			n.required = append(n.required, f.(string))
		}
	case "minProperties":
		n.minProps = toInt(v)
	case "maxProperties":
		n.maxProps = toInt(v)
	case "minLength":
		n.minLength = toInt(v)
	case "maxLength":
		n.maxLength = toInt(v)
	case "minItems":
		n.minItems = toInt(v)
	case "maxItems":
		n.maxItems = toInt(v)
	case "uniqueItems":
		n.uniqueItems = v.(bool)
	case "minimum":
		b := coreValue(v)
		n.minimum = &b
	case "maximum":
		b := coreValue(v)
		n.maximum = &b
	case "exclusiveMinimum":
		n.exclusiveMin = v.(bool)
	case "exclusiveMaximum":
		n.exclMax = v.(bool)
	case "multipleOf":
		n.multipleOf = asDecimal(coreValue(v))
	case "pattern":
		n.patternSrc = v.(string)
		n.pattern = compilePattern(n.patternSrc)
	case "enum":
		for _, x := range v.([]any) {
			n.enum = append(n.enum, coreValue(x))
		}
	}
	return nil
}

// subschemas builds the keywords that hold subschemas; handled is false
// for any other keyword.
func (n *node) subschemas(key string, v any, path string) (handled bool, err error) {
	switch key {
	case "properties":
		for _, kv := range v.(*object).pairs {
			s, err := build(kv.value, path+"/"+escape(kv.key))
			if err != nil {
				return true, err
			}
			n.properties = append(n.properties, prop{kv.key, s})
		}
	case "patternProperties":
		for _, kv := range v.(*object).pairs {
			s, err := build(kv.value, path+"/"+escape(kv.key))
			if err != nil {
				return true, err
			}
			n.patterns = append(n.patterns, patternProp{compilePattern(kv.key), s})
		}
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			n.noAddl = !b
		} else if n.addlProps, err = build(v, path); err != nil {
			return true, err
		}
	case "additionalItems":
		if b, ok := v.(bool); ok {
			n.noAddlItems = !b
		} else if n.addlItems, err = build(v, path); err != nil {
			return true, err
		}
	case "items":
		if arr, ok := v.([]any); ok {
			n.tuple = true
			for i, x := range arr {
				s, err := build(x, fmt.Sprintf("%s/%d", path, i))
				if err != nil {
					return true, err
				}
				n.itemList = append(n.itemList, s)
			}
			return true, nil
		}
		n.items, err = build(v, path)
	case "dependencies":
		err = n.dependencies(v.(*object), path)
	case "allOf", "anyOf", "oneOf":
		var list []*node
		for i, x := range v.([]any) {
			s, err := build(x, fmt.Sprintf("%s/%d", path, i))
			if err != nil {
				return true, err
			}
			list = append(list, s)
		}
		switch key {
		case "allOf":
			n.allOf = list
		case "anyOf":
			n.anyOf = list
		default:
			n.oneOf = list
		}
	case "not":
		n.not, err = build(v, path)
	default:
		return false, nil
	}
	return true, err
}

// dependencies builds property dependencies (lists of field names) and
// schema dependencies.
func (n *node) dependencies(deps *object, path string) error {
	for _, kv := range deps.pairs {
		if _, annotation := kv.value.(string); annotation {
			continue // title or description (checked by the dialect)
		}
		if arr, ok := kv.value.([]any); ok {
			if n.depFields == nil {
				n.depFields = map[string][]string{}
			}
			for _, f := range arr {
				n.depFields[kv.key] = append(n.depFields[kv.key], f.(string))
			}
			continue
		}
		s, err := build(kv.value, path+"/"+escape(kv.key))
		if err != nil {
			return err
		}
		if n.depSchemas == nil {
			n.depSchemas = map[string]*node{}
		}
		n.depSchemas[kv.key] = s
	}
	return nil
}

func names(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case float64:
		return int64(t)
	case bsonValue:
		if r := asDecimal(coreValue(t)); r != nil && r.IsInt() && r.Num().IsInt64() {
			return r.Num().Int64()
		}
	}
	return -1
}

// coreValue encodes a schema value (enum member) as a BSON value.
func coreValue(v any) bsoncore.Value {
	var goVal any
	switch t := v.(type) {
	case bsonValue:
		goVal = t.v
	default:
		goVal = toBSON(t)
	}
	doc, err := bson.Marshal(bson.D{{Key: "v", Value: goVal}})
	if err != nil {
		return bsoncore.Value{Type: bsoncore.TypeNull}
	}
	return bsoncore.Document(doc).Lookup("v")
}

// toBSON turns the walker's tree back into BSON-marshalable values.
func toBSON(v any) any {
	switch t := v.(type) {
	case *object:
		d := make(bson.D, len(t.pairs))
		for i, p := range t.pairs {
			d[i] = bson.E{Key: p.key, Value: toBSON(p.value)}
		}
		return d
	case []any:
		a := make(bson.A, len(t))
		for i, x := range t {
			a[i] = toBSON(x)
		}
		return a
	case bsonValue:
		return t.v
	}
	return v
}
