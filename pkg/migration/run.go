package migration

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RunKind names a run-once operation: one that changes the database
// rather than one document, run once by `up` under the migration lock.
type RunKind string

// The run-once operations.
const (
	// RunRename renames collection From to To (renameCollection).
	RunRename RunKind = "renameCollection"
	// RunDrop drops collection Name; refused while it holds documents
	// unless AllowNonEmpty.
	RunDrop RunKind = "dropCollection"
	// RunCopy copies every document of From into To.
	RunCopy RunKind = "copyCollection"
	// RunExtract moves the elements of an embedded array into documents
	// of their own collection (see [Extract]).
	RunExtract RunKind = "extract"
)

// RunKinds lists the run-once operations, in documentation order.
var RunKinds = []RunKind{RunRename, RunDrop, RunCopy, RunExtract, RunEmbed, RunGo}

// RunOp is one run-once operation of a migration's `run:` list.
type RunOp struct {
	Kind RunKind `json:"kind"`
	// From and To name the collections of renameCollection and
	// copyCollection.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Name is the collection dropCollection drops.
	Name string `json:"name,omitempty"`
	// AllowNonEmpty lets dropCollection drop a collection that still
	// holds documents.
	AllowNonEmpty bool `json:"allowNonEmpty,omitempty"`
	// Extract is set for extract.
	Extract *Extract `json:"extract,omitempty"`
	// Embed is set for embed.
	Embed *Embed `json:"embed,omitempty"`
	// Func and DownFunc (go) name the registered Go functions up and
	// down run.
	Func     string `json:"func,omitempty"`
	DownFunc string `json:"downFunc,omitempty"`
	// Pos is where the operation is in the file.
	Pos Pos `json:"pos"`
}

// Keep is what an extract leaves in the parent in place of the array.
type Keep string

// What the parent keeps.
const (
	// KeepNothing removes the array.
	KeepNothing Keep = "nothing"
	// KeepCount removes the array and adds the number of elements moved
	// to the parent's CountField.
	KeepCount Keep = "count"
	// KeepFirst keeps the first First elements (also moved).
	KeepFirst Keep = "first"
)

// Extract moves the elements of array Array of collection From into
// collection To: each becomes a document with Ref set to its parent's
// _id (an element that is not a document is stored under "value").
type Extract struct {
	From  string `json:"from"`
	Array string `json:"array"`
	To    string `json:"to"`
	Ref   string `json:"ref"`
	Keep  Keep   `json:"keep"`
	// CountField is the parent's field counting its moved elements
	// (Keep == KeepCount).
	CountField string `json:"countField,omitempty"`
	// First is how many elements the parent keeps (Keep == KeepFirst).
	First int `json:"first,omitempty"`
}

// Collections are the collections op reads or writes.
func (op RunOp) Collections() []string {
	switch op.Kind {
	case RunDrop:
		return []string{op.Name}
	case RunExtract:
		return []string{op.Extract.From, op.Extract.To}
	case RunEmbed:
		return []string{op.Embed.Into, op.Embed.From}
	case RunGo:
		return nil
	}
	return []string{op.From, op.To}
}

const runHint = "write a list of operations, one each: `- renameCollection: {from: a, to: b}`, `- dropCollection: {name: a}`, `- copyCollection: {from: a, to: b}`, `- extract: {from: posts, array: comments, to: comments, ref: postId, keep: {count: commentCount}}`, `- embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {name: name, price: price}}`"

func (p *parser) run(n *yaml.Node) []RunOp {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, runHint, "run must be a list of operations, found %s", kindName(n))
		return nil
	}
	names := make([]string, len(RunKinds))
	for i, k := range RunKinds {
		names[i] = string(k)
	}
	var out []RunOp
	for i, item := range n.Content {
		item = deref(item)
		ptr := fmt.Sprintf("/run/%d", i)
		p.pos[ptr] = posOf(item)
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			p.errorf(item, runHint, "run operation %d must be a mapping with exactly one operation", i+1)
			continue
		}
		p.each(item, ptr, names, func(key string, k, v *yaml.Node) {
			if op, ok := p.runOp(RunKind(key), v, ptr+"/"+key); ok {
				op.Pos = posOf(item)
				out = append(out, op)
			}
		})
	}
	return out
}

var runKeys = map[RunKind][]string{
	RunRename:  {"from", "to"},
	RunCopy:    {"from", "to"},
	RunDrop:    {"name", "allowNonEmpty"},
	RunExtract: {"from", "array", "to", "ref", "keep"},
}

func (p *parser) runOp(kind RunKind, n *yaml.Node, ptr string) (RunOp, bool) {
	op := RunOp{Kind: kind}
	if kind == RunEmbed {
		e, ok := p.embed(n, ptr)
		op.Embed = e
		return op, ok
	}
	if kind == RunGo {
		return p.goOp(n, ptr)
	}
	if !p.mapping(n, string(kind), runHint) {
		return op, false
	}
	errs := len(p.errs)
	got := map[string]string{}
	var keep *yaml.Node
	p.each(n, ptr, runKeys[kind], func(key string, k, v *yaml.Node) {
		switch key {
		case "allowNonEmpty":
			op.AllowNonEmpty = p.boolean(v, key)
		case "keep":
			keep = v
		default:
			s, ok := p.str(v, "write a name")
			if !ok {
				return
			}
			if key == "array" || key == "ref" {
				if p.checkPath(v, s) {
					got[key] = s
				}
				return
			}
			if msg, why := collectionNameProblem(s); msg != "" {
				p.errorf(v, "use the collection's real name"+why, "invalid collection name %s: %s", quoteName(s), msg)
				return
			}
			got[key] = s
		}
	})
	for _, key := range runKeys[kind] {
		if _, ok := got[key]; !ok && key != "allowNonEmpty" && key != "keep" && len(p.errs) == errs {
			p.errorf(n, "add `"+key+": ...`", "%s needs %s", kind, key)
		}
	}
	op.From, op.To, op.Name = got["from"], got["to"], got["name"]
	if kind == RunExtract {
		op.From, op.To = "", ""
		op.Extract = &Extract{From: got["from"], Array: got["array"], To: got["to"], Ref: got["ref"], Keep: KeepNothing}
		p.keep(op.Extract, keep, n)
	}
	if (kind == RunRename || kind == RunCopy || kind == RunExtract) && len(p.errs) == errs {
		if from, to := op.Collections()[0], op.Collections()[1]; from == to {
			p.errorf(n, "name two different collections", "%s from %q to itself", kind, from)
		}
	}
	return op, len(p.errs) == errs
}

const keepHint = "write `keep: nothing`, `keep: {count: commentCount}` or `keep: {first: 3}`"

// keep reads what an extract's parent keeps: nothing (the default), a
// count field, or the first k elements.
func (p *parser) keep(x *Extract, n, at *yaml.Node) {
	switch {
	case n == nil:
		return
	case n.Kind == yaml.ScalarNode && n.Value == "nothing":
		return
	case n.Kind != yaml.MappingNode || len(n.Content) != 2:
		p.errorf(n, keepHint, "invalid keep %s", kindName(n))
		return
	}
	k, v := deref(n.Content[0]), deref(n.Content[1])
	switch k.Value {
	case "count":
		if s, ok := p.str(v, keepHint); ok && p.checkPath(v, s) {
			if s == x.Array || strings.HasPrefix(s, x.Array+".") {
				p.errorf(v, "name a field beside the array, such as commentCount", "the count field %q is inside the array %q", s, x.Array)
				return
			}
			x.Keep, x.CountField = KeepCount, s
		}
	case "first":
		var k int
		if v.Tag != "!!int" || v.Decode(&k) != nil || k < 1 || k > 1000 {
			p.errorf(v, "write a whole number from 1 to 1000", "invalid keep.first %s", kindName(v))
			return
		}
		x.Keep, x.First = KeepFirst, k
	default:
		p.errorf(k, keepHint, "unknown keep %q", k.Value)
	}
}
