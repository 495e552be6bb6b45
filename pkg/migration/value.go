package migration

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

// extJSONKeys are the keys that open an Extended JSON value ({$oid: ...}).
// A mapping whose first key is one of them is decoded as Extended JSON;
// other $-keys ($jsonSchema, $exists, ...) are ordinary operator keys.
var extJSONKeys = map[string]string{
	"$oid":               `{$oid: "64b7f0c2a1b2c3d4e5f60718"}`,
	"$date":              `{$date: "2024-01-31T12:00:00Z"}`,
	"$numberInt":         `{$numberInt: "42"}`,
	"$numberLong":        `{$numberLong: "9007199254740993"}`,
	"$numberDouble":      `{$numberDouble: "1.5"}`,
	"$numberDecimal":     `{$numberDecimal: "19.99"}`,
	"$binary":            `{$binary: {base64: "AQID", subType: "00"}}`,
	"$uuid":              `{$uuid: "3b241101-e2bb-4255-8caf-4136c566a962"}`,
	"$regularExpression": `{$regularExpression: {pattern: "^a", options: "i"}}`,
	"$timestamp":         `{$timestamp: {t: 1700000000, i: 1}}`,
	"$minKey":            `{$minKey: 1}`,
	"$maxKey":            `{$maxKey: 1}`,
	"$symbol":            `{$symbol: "s"}`,
	"$code":              `{$code: "function() {}"}`,
	"$dbPointer":         `{$dbPointer: {$ref: "c", $id: {$oid: "..."}}}`,
	"$undefined":         `{$undefined: true}`,
}

var wholeNumber = regexp.MustCompile(`^[-+]?[0-9]+$`)

// value converts a YAML node into a BSON value, recording the position of
// every nested node under ptr. Mappings become bson.D (order kept), lists
// bson.A, numbers int32, int64 or float64.
func (p *parser) value(n *yaml.Node, ptr string) (any, bool) {
	n = deref(n)
	p.pos[ptr] = posOf(n)
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) > 0 {
			if example, ok := extJSONKeys[deref(n.Content[0]).Value]; ok {
				return p.extJSON(n, example)
			}
		}
		d := bson.D{}
		ok := true
		p.each(n, ptr, nil, func(key string, k, v *yaml.Node) {
			x, good := p.value(v, ptr+"/"+escapePtr(key))
			ok = ok && good
			d = append(d, bson.E{Key: key, Value: x})
		})
		return d, ok
	case yaml.SequenceNode:
		a := bson.A{}
		ok := true
		for i, item := range n.Content {
			x, good := p.value(item, fmt.Sprintf("%s/%d", ptr, i))
			ok = ok && good
			a = append(a, x)
		}
		return a, ok
	case yaml.ScalarNode:
		return p.scalar(n)
	}
	p.errorf(n, "", "unsupported YAML node")
	return nil, false
}

func (p *parser) scalar(n *yaml.Node) (any, bool) {
	switch n.Tag {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			p.errorf(n, "write true or false", "invalid boolean %q", n.Value)
			return nil, false
		}
		return b, true
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			p.errorf(n, `write a number between -2^63 and 2^63-1, or {$numberDecimal: "..."} for larger values`, "integer %s does not fit in 64 bits", n.Value)
			return nil, false
		}
		if i >= math.MinInt32 && i <= math.MaxInt32 {
			return int32(i), true
		}
		return i, true
	case "!!float":
		if wholeNumber.MatchString(n.Value) {
			// YAML turns an integer too large for int64 into a float,
			// silently losing digits; refuse instead.
			p.errorf(n, `write a number between -2^63 and 2^63-1, or {$numberDecimal: "..."} for larger values`, "integer %s does not fit in 64 bits", n.Value)
			return nil, false
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			p.errorf(n, "write a decimal number such as 1.5", "invalid number %q", n.Value)
			return nil, false
		}
		return f, true
	case "!!timestamp":
		p.errorf(n, fmt.Sprintf(`quote it for a string (%q), or write a date as {$date: "%sT00:00:00Z"}`, n.Value, n.Value), "ambiguous unquoted date %s", n.Value)
		return nil, false
	case "!!binary":
		p.errorf(n, extJSONKeys["$binary"], "YAML !!binary is not supported; write binary data as Extended JSON")
		return nil, false
	case "!!str", "":
		return n.Value, true
	}
	if strings.HasPrefix(n.Tag, "!!") {
		p.errorf(n, "remove the tag", "unsupported YAML tag %s", n.Tag)
		return nil, false
	}
	p.errorf(n, "remove the tag; values that are not plain JSON use MongoDB Extended JSON, such as "+extJSONKeys["$date"], "custom YAML tag %s is not supported", n.Tag)
	return nil, false
}

// extJSON decodes a mapping such as {$date: "..."} with the driver's
// Extended JSON parser (relaxed and canonical forms both accepted).
func (p *parser) extJSON(n *yaml.Node, example string) (any, bool) {
	plain, err := toJSON(n)
	if err == nil {
		var wrapped []byte
		wrapped, err = json.Marshal(map[string]any{"v": plain})
		if err == nil {
			var d bson.D
			if err = bson.UnmarshalExtJSON(wrapped, false, &d); err == nil && len(d) == 1 {
				return d[0].Value, true
			}
		}
	}
	key := deref(n.Content[0]).Value
	msg := "malformed Extended JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	p.errorf(n, "write it like "+example, "%s value: %s", key, msg)
	return nil, false
}

// toJSON converts a YAML subtree to plain Go values for encoding/json.
func toJSON(n *yaml.Node) (any, error) {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		keys := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i]).Value
			v, err := toJSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("key %q appears twice", k)
			}
			m[k] = v
			keys = append(keys, k)
		}
		return orderedJSON{keys: keys, m: m}, nil
	case yaml.SequenceNode:
		a := make([]any, len(n.Content))
		for i, item := range n.Content {
			v, err := toJSON(item)
			if err != nil {
				return nil, err
			}
			a[i] = v
		}
		return a, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
		case "!!int", "!!float":
			if _, err := strconv.ParseFloat(n.Value, 64); err != nil {
				var f float64
				if err := n.Decode(&f); err != nil {
					return nil, err
				}
				return f, nil
			}
			return json.Number(n.Value), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("unsupported YAML node")
}

// orderedJSON marshals a mapping keeping the file's key order, which
// Extended JSON needs ($binary's base64 before subType is not required, but
// $dbPointer's $ref before $id is).
type orderedJSON struct {
	keys []string
	m    map[string]any
}

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
