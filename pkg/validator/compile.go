package validator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Schema is a compiled $jsonSchema.
type Schema struct {
	doc   bson.D
	root  *node
	nodes []*node // by id
}

// Document returns the schema as given to [Compile].
func (s *Schema) Document() bson.D { return s.doc }

// Compile checks schema, the value of a validator's $jsonSchema, against
// MongoDB's dialect and returns it compiled. On failure the error is a
// [SchemaErrors] listing every problem with its JSON pointer.
func Compile(schema bson.D) (*Schema, error) {
	tree := fromBSON(schema)
	if path, deep := tooDeep(tree, 1, ""); deep {
		return nil, SchemaErrors{{Path: path, Msg: fmt.Sprintf("the schema nests deeper than %d levels, which MongoDB refuses "+
			"(no command may nest past %d, and the schema sits %d levels inside collMod); flatten it", maxSchemaDepth, maxBSONDepth, maxBSONDepth-maxSchemaDepth)}}
	}
	d := &dialect{}
	d.schema(tree, "")
	if !d.longPattern { // the meta-schema compiles every pattern: 26 s and 1.2 GB for one of 5 MB
		d.errs = append(d.errs, metaSchemaErrors(tree, d.errs, d.decided)...)
	}
	if len(d.errs) > 0 {
		sortByDocumentOrder(d.errs, tree)
		return nil, d.errs
	}
	root, err := build(tree, "")
	if err != nil {
		return nil, SchemaErrors{{Msg: "cannot compile: " + err.Error()}}
	}
	return &Schema{doc: schema, root: root, nodes: number(root)}, nil
}

// metaSchemaErrors validates the schema against draft 4's meta-schema and
// returns problems at paths the dialect walker did not already report nor
// decide by MongoDB's own rules.
func metaSchemaErrors(tree any, known SchemaErrors, decided []string) SchemaErrors {
	raw, err := json.Marshal(toJSON(tree))
	if err != nil {
		return SchemaErrors{{Msg: "cannot encode schema: " + err.Error()}}
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft4
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errors.New("mongomig does not load remote schemas") }
	if err := c.AddResource("mongomig:///schema.json", bytes.NewReader(raw)); err != nil {
		return SchemaErrors{{Msg: "invalid schema: " + err.Error()}}
	}
	_, err = c.Compile("mongomig:///schema.json")
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		// Errors other than meta-schema violations (a bad pattern) are
		// reported by the dialect walker with a better message.
		if len(known) > 0 {
			return nil
		}
		return SchemaErrors{{Msg: strings.TrimPrefix(err.Error(), "jsonschema: ")}}
	}
	var out SchemaErrors
	for _, leaf := range leaves(ve) {
		path := leaf.InstanceLocation
		if reportedAt(known, path) || reportedAt(out, path) || decidedAt(decided, path) {
			continue
		}
		out = append(out, &SchemaError{Path: path, Msg: metaMessage(leaf)})
	}
	return out
}

// leaves returns the innermost causes of a validation error: the specific
// keyword failures rather than "doesn't validate with #".
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func reportedAt(errs SchemaErrors, path string) bool {
	return slices.ContainsFunc(errs, func(e *SchemaError) bool {
		return e.Path == path || (e.Path != "" && strings.HasPrefix(path, e.Path+"/"))
	})
}

func metaMessage(ve *jsonschema.ValidationError) string {
	key := ve.InstanceLocation[strings.LastIndexByte(ve.InstanceLocation, '/')+1:]
	msg := fmt.Sprintf("invalid value for %s: %s", key, ve.Message)
	var want, got string
	if n, _ := fmt.Sscanf(strings.ReplaceAll(ve.Message, ",", ""), "expected %s but got %s", &want, &got); n == 2 {
		msg += fmt.Sprintf("; write a %s", want)
	} else if strings.Contains(ve.Message, ">=") || strings.Contains(ve.Message, "minimum") {
		msg += "; write a value the draft 4 meta-schema allows"
	}
	return msg
}

// sortByDocumentOrder orders errors as their paths appear in the schema.
func sortByDocumentOrder(errs SchemaErrors, tree any) {
	order := map[string]int{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		order[path] = len(order)
		switch t := v.(type) {
		case *object:
			for _, p := range t.pairs {
				walk(p.value, path+"/"+escape(p.key))
			}
		case []any:
			for i, x := range t {
				walk(x, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(tree, "")
	slices.SortStableFunc(errs, func(a, b *SchemaError) int { return order[a.Path] - order[b.Path] })
}

// MongoDB validates every incoming command against a nesting limit of 200
// (BSONDepth::kDefaultMaxAllowableDepth, src/mongo/bson/bson_depth.h,
// enforced by validateBSON on each OP_MSG section, src/mongo/rpc/op_msg.cpp).
// The schema is the value of {collMod: ..., validator: {$jsonSchema: ...}}:
// its root is already the third level. Checking the depth first also keeps
// lint fast: the draft 4 meta-schema check costs the square of the depth.
const (
	maxBSONDepth   = 200
	maxSchemaDepth = maxBSONDepth - 2
)

// tooDeep returns the JSON pointer of the first object or array nested past
// maxSchemaDepth (depth counts the value at path).
func tooDeep(v any, depth int, path string) (string, bool) {
	switch t := v.(type) {
	case *object:
		if depth > maxSchemaDepth {
			return path, true
		}
		for _, p := range t.pairs {
			if at, deep := tooDeep(p.value, depth+1, path+"/"+escape(p.key)); deep {
				return at, true
			}
		}
	case []any:
		if depth > maxSchemaDepth {
			return path, true
		}
		for i, x := range t {
			if at, deep := tooDeep(x, depth+1, fmt.Sprintf("%s/%d", path, i)); deep {
				return at, true
			}
		}
	}
	return "", false
}
