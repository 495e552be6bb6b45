package migration

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var opNames = func() []string {
	s := make([]string, len(Ops))
	for i, op := range Ops {
		s[i] = string(op)
	}
	return s
}()

const stepsHint = "write a list of steps, one operation each: `- rename: {old: new}`, `- set: {path: value}`, `- default: {path: value}`, `- unset: [path]`, `- copy: {from: to}`, `- func: name`"

func (p *parser) steps(n *yaml.Node, ptr, what string) []Step {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, stepsHint, "%s must be a list of steps, found %s", what, kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.errorf(n, "remove the key, or add steps: "+stepsHint, "%s has no steps", what)
	}
	var out []Step
	for i, item := range n.Content {
		item = deref(item)
		sptr := fmt.Sprintf("%s/%d", ptr, i)
		p.pos[sptr] = posOf(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item, stepsHint, "%s step %d must be a mapping with one operation, found %s", what, i+1, kindName(item))
			continue
		}
		ops, discard, discardKey := p.stepDiscard(item, sptr)
		if len(ops.Content) == 0 {
			p.errorf(item, stepsHint, "%s step %d is empty", what, i+1)
			continue
		}
		if len(ops.Content) > 2 {
			p.errorf(item, "split it into one list item per operation, in the order they must run", "%s step %d has %d operations", what, i+1, len(ops.Content)/2)
			continue
		}
		p.each(ops, sptr, opNames, func(key string, k, v *yaml.Node) {
			if s, ok := p.step(Op(key), v, sptr+"/"+escapePtr(key)); ok {
				s.Pos = posOf(item)
				s.Discard = discard
				if discardKey != nil && !p.checkDiscardKey(discardKey, what, s.Op) {
					return
				}
				out = append(out, s)
			}
		})
	}
	return out
}

var funcName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

func (p *parser) step(op Op, v *yaml.Node, ptr string) (Step, bool) {
	s := Step{Op: op}
	errs := len(p.errs)
	switch op {
	case OpFunc:
		name, ok := p.str(v, "write `func: registeredName`")
		if ok && !funcName.MatchString(name) {
			p.errorf(v, "use the name the application registers, such as splitName", "invalid function name %q", name)
			ok = false
		}
		s.Func = name
		return s, ok
	case OpUnset:
		s.Fields = p.unsetPaths(v, ptr)
	case OpSet, OpDefault:
		s.Fields = p.valuePairs(op, v, ptr)
	case OpRename, OpCopy:
		s.Fields = p.pathPairs(op, v, ptr)
	}
	if len(p.errs) > errs {
		return s, false
	}
	// An empty operand (`set: {}`, `unset: []`) is a step that does
	// nothing, as MongoDB 5.0+ accepts {$set: {}} as a no-op update.
	return s, p.checkConflicts(op, s.Fields, v)
}

func (p *parser) unsetPaths(v *yaml.Node, ptr string) []Field {
	const hint = "write `unset: [path, other.path]`"
	var items []*yaml.Node
	switch {
	case v.Kind == yaml.ScalarNode:
		items = []*yaml.Node{v}
	case v.Kind == yaml.SequenceNode:
		items = v.Content
	case v.Kind == yaml.MappingNode && len(v.Content) == 0:
		return nil // `unset: {}`, like MongoDB's {$unset: {}}: nothing to do
	default:
		p.errorf(v, hint, "unset takes a list of field paths, found %s", kindName(v))
		return nil
	}
	var out []Field
	for i, item := range items {
		item = deref(item)
		p.pos[fmt.Sprintf("%s/%d", ptr, i)] = posOf(item)
		path, ok := p.str(item, hint)
		if ok && p.checkPath(item, path) && p.checkRemovesID(item, path) {
			out = append(out, Field{Path: path, Pos: posOf(item)})
		}
	}
	return out
}

// operands walks a step's {key: value} mapping, calling field for each
// pair; form is how the step is written, for hints.
func (p *parser) operands(op Op, v *yaml.Node, ptr, form string, field func(key string, k, val *yaml.Node) (Field, bool)) []Field {
	hint := fmt.Sprintf("write `%s: %s`", op, form)
	if !p.mapping(v, string(op), hint) {
		return nil
	}
	var out []Field
	p.each(v, ptr, nil, func(key string, k, val *yaml.Node) {
		if f, ok := field(key, k, val); ok {
			out = append(out, f)
		}
	})
	return out
}

func (p *parser) valuePairs(op Op, v *yaml.Node, ptr string) []Field {
	return p.operands(op, v, ptr, "{path: value}", func(path string, k, val *yaml.Node) (Field, bool) {
		if !p.checkPath(k, path) {
			return Field{}, false
		}
		x, ok := p.value(val, ptr+"/"+escapePtr(path))
		return Field{Path: path, Value: x, Pos: posOf(k)}, ok
	})
}

func (p *parser) pathPairs(op Op, v *yaml.Node, ptr string) []Field {
	return p.operands(op, v, ptr, "{from.path: to.path}", func(from string, k, val *yaml.Node) (Field, bool) {
		to, ok := p.str(val, fmt.Sprintf("write `%s: {from.path: to.path}`", op))
		if !ok || !p.checkPath(k, from) || !p.checkPath(val, to) {
			return Field{}, false
		}
		if op == OpRename && !p.checkRemovesID(k, from) {
			return Field{}, false
		}
		if from == to || isPrefix(from, to) || isPrefix(to, from) {
			p.errorf(k, "the source and the target must not be the same field or contain one another (MongoDB refuses the same $rename)", "%s %q to %q: the paths overlap", op, from, to)
			return Field{}, false
		}
		return Field{Path: from, To: to, Pos: posOf(k)}, true
	})
}

// checkPath rejects paths no document could be updated through, with
// MongoDB's rules (src/mongo/db/update/field_checker.cpp, isUpdatable,
// isPositional, hasArrayFilter): an empty segment, and the positional
// segments `$`, `$[]` and `$[id]`, which need a query or arrayFilters that
// an upgrade does not have. A segment that merely starts with '$' is an
// ordinary field name below the top level, as in MongoDB 5.0+ (SERVER-49117,
// jstests/core/updateh.js: {$set: {"sneaky.$x": 1}} gives {sneaky: {$x: 1}}).
// At the top level it is refused, stricter than MongoDB: the guarded
// write-back and the server-side `default` must query the field, and
// MongoDB's query language reads a top-level `$` key as an operator.
func (p *parser) checkPath(n *yaml.Node, path string) bool {
	const hint = "write a dotted field path such as contact.email"
	if path == "" {
		p.errorf(n, hint, "empty field path")
		return false
	}
	if !p.checkPrintable(n, "field path", path) {
		return false
	}
	for i, seg := range strings.Split(path, ".") {
		switch {
		case seg == "":
			p.errorf(n, hint, "field path %q has an empty segment", path)
			return false
		case strings.ContainsRune(seg, 0):
			p.errorf(n, hint, "field path %q contains a NUL character", path)
			return false
		case seg == "$" || strings.HasPrefix(seg, "$[") && strings.HasSuffix(seg, "]"):
			p.errorf(n, hint+"; positional and $-prefixed segments are not supported", "field path %q has a segment starting with '$'", path)
			return false
		case i == 0 && seg[0] == '$':
			p.errorf(n, "rename the field in a func step; below the top level ($ in a.$b) such names are fine",
				"field path %q starts with '$': mongomig cannot query a top-level $-prefixed field (MongoDB reads it as an operator) to guard its writes", path)
			return false
		}
	}
	return true
}

// checkRemovesID rejects removing _id itself (unset, or the source of a
// rename): MongoDB refuses it for every document, since every stored
// document has an _id (ImmutableField, modifier_node.cpp
// checkImmutablePathsNotModified). Other paths through _id are checked per
// document, as MongoDB checks them: setting _id to the value it holds is
// accepted, changing it refused.
func (p *parser) checkRemovesID(n *yaml.Node, path string) bool {
	if path != "_id" {
		return true
	}
	p.errorf(n, "_id is immutable in MongoDB; copy the document under a new _id in a func step if you must", "an upgrade cannot change %q", path)
	return false
}

// checkConflicts rejects two operands of one step on the same or nested
// paths, as MongoDB rejects such an update ("would create a conflict").
func (p *parser) checkConflicts(op Op, fields []Field, n *yaml.Node) bool {
	touched := func(f Field) []string {
		if f.To == "" {
			return []string{f.Path}
		}
		if op == OpCopy {
			return []string{f.To}
		}
		return []string{f.Path, f.To}
	}
	ok := true
	for i := range fields {
		for j := 0; j < i; j++ {
			for _, a := range touched(fields[i]) {
				for _, b := range touched(fields[j]) {
					if a == b || isPrefix(a, b) || isPrefix(b, a) {
						p.add(fields[i].Pos, "split it into two steps, in the order they must run", "%s touches %q and %q in one step: the paths conflict", op, b, a)
						ok = false
					}
				}
			}
		}
	}
	return ok
}

// isPrefix reports whether path a is a strict ancestor of path b.
func isPrefix(a, b string) bool {
	return len(b) > len(a) && strings.HasPrefix(b, a) && b[len(a)] == '.'
}
