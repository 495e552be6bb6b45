package migration

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

// The integrity declarations: promises of a denormalized schema that no
// server enforces, declared per collection and checked by `mongomig
// check` (package integrity). Each of a collection's four lists is
// replaced as a whole by the next migration that declares it, as a
// validator is: the rules in force are those of the last file declaring
// each list ([IntegrityRules]); an empty list (`references: []`) removes
// them.

// Dangling is what a reference to a missing document means.
type Dangling string

// What a dangling reference means.
const (
	// DanglingReport: `check` reports it; `repair` leaves it.
	DanglingReport Dangling = "report"
	// DanglingUnset: `repair` removes the reference (the field, or the
	// array element holding it).
	DanglingUnset Dangling = "unset"
	// DanglingDelete: `repair` deletes the referencing document.
	DanglingDelete Dangling = "delete"
)

// Reference is a path of a collection's documents holding _ids of
// documents of collection To. A path through an array (classes._id, or
// an array of ids) holds one reference per element.
type Reference struct {
	Path       string   `json:"path"`
	To         string   `json:"to"`
	OnDangling Dangling `json:"onDangling"`
	Pos        Pos      `json:"pos"`
}

// CopyMode is whether a copied field follows its source.
type CopyMode string

// The copy modes.
const (
	// CopyMirror: the copy must equal the source's field now; `repair`
	// rewrites it.
	CopyMirror CopyMode = "mirror"
	// CopySnapshot: the copy is historical on purpose (an order's price as
	// bought): it must exist and keep the source's type, and is never
	// rewritten.
	CopySnapshot CopyMode = "snapshot"
)

// Copy is a set of fields copied from the document a reference names.
// Via is the reference's path (a declared reference of the collection);
// the copied fields live beside it: relative to Via's parent (for
// classes._id, in each element of classes; for productId, at the top).
type Copy struct {
	Via    string      `json:"via"`
	Mode   CopyMode    `json:"mode"`
	Fields []CopyField `json:"fields"`
	Pos    Pos         `json:"pos"`
}

// CopyField is one copied field: Path (relative to the copy's base) holds
// a copy of the source document's From.
type CopyField struct {
	Path string `json:"path"`
	From string `json:"from"`
	Pos  Pos    `json:"pos"`
}

// Base is the path the copied fields are relative to ("" for the top).
func (c Copy) Base() string {
	if i := strings.LastIndexByte(c.Via, '.'); i >= 0 {
		return c.Via[:i]
	}
	return ""
}

// Key is the last segment of Via: the field of the base holding the _id.
func (c Copy) Key() string { return c.Via[strings.LastIndexByte(c.Via, '.')+1:] }

// AggOp is an aggregate's operation.
type AggOp string

// The aggregate operations.
const (
	AggCount AggOp = "count"
	AggSum   AggOp = "sum"
	AggMin   AggOp = "min"
	AggMax   AggOp = "max"
)

// Aggregate is a field of a parent collection holding the count, sum,
// min or max (of field Of) of the documents of collection From whose By
// holds the parent's _id. A parent without children holds 0 (count, sum)
// or nothing (min, max).
type Aggregate struct {
	Field string `json:"field"`
	Op    AggOp  `json:"op"`
	From  string `json:"from"`
	By    string `json:"by"`
	Of    string `json:"of,omitempty"`
	Pos   Pos    `json:"pos"`
}

// Counter is a sequence: Path of the collection's documents takes values
// handed out by field Field of the document with _id ID of collection In,
// which must stay at or above the largest value used.
type Counter struct {
	Path  string `json:"path"`
	In    string `json:"in"`
	ID    any    `json:"id"`
	Field string `json:"field"`
	Pos   Pos    `json:"pos"`
}

// Integrity is one collection's rules in force (see [IntegrityRules]).
type Integrity struct {
	Collection string
	References []Reference
	Copies     []Copy
	Aggregates []Aggregate
	Counters   []Counter
	// File is, per list ("references", ...), the file that declared it.
	File map[string]string
}

// Empty reports whether no rule is in force.
func (r *Integrity) Empty() bool {
	return len(r.References)+len(r.Copies)+len(r.Aggregates)+len(r.Counters) == 0
}

// Reference returns the collection's reference at path, if declared.
func (r *Integrity) Reference(path string) (Reference, bool) {
	for _, ref := range r.References {
		if ref.Path == path {
			return ref, true
		}
	}
	return Reference{}, false
}

// IntegrityRules returns the integrity rules in force after ms (in
// version order), per collection, in order of first declaration;
// collections whose rules are all removed are left out.
func IntegrityRules(ms []*Migration) []*Integrity {
	var out []*Integrity
	byName := map[string]*Integrity{}
	rule := func(name string) *Integrity {
		r := byName[name]
		if r == nil {
			r = &Integrity{Collection: name, File: map[string]string{}}
			byName[name] = r
			out = append(out, r)
		}
		return r
	}
	for _, m := range ms {
		for _, c := range m.Collections {
			if c.References == nil && c.Copies == nil && c.Aggregates == nil && c.Counters == nil {
				continue
			}
			r := rule(c.Name)
			if c.References != nil {
				r.References, r.File["references"] = c.References, m.File
			}
			if c.Copies != nil {
				r.Copies, r.File["copies"] = c.Copies, m.File
			}
			if c.Aggregates != nil {
				r.Aggregates, r.File["aggregates"] = c.Aggregates, m.File
			}
			if c.Counters != nil {
				r.Counters, r.File["counters"] = c.Counters, m.File
			}
		}
		embedRules(m, rule)
	}
	kept := out[:0]
	for _, r := range out {
		if !r.Empty() {
			kept = append(kept, r)
		}
	}
	return kept
}

// integrityChecksum is what SchemaChecksum covers of c's integrity
// declarations: nil when it has none, so the checksums of files without
// them are those they always had.
func integrityChecksum(c *Collection) bson.D {
	if c.References == nil && c.Copies == nil && c.Aggregates == nil && c.Counters == nil {
		return nil
	}
	var d bson.D
	if c.References != nil {
		refs := bson.A{}
		for _, r := range c.References {
			refs = append(refs, bson.D{{Key: "path", Value: r.Path}, {Key: "to", Value: r.To}, {Key: "onDangling", Value: string(r.OnDangling)}})
		}
		d = append(d, bson.E{Key: "references", Value: refs})
	}
	if c.Copies != nil {
		copies := bson.A{}
		for _, cp := range c.Copies {
			fields := bson.A{}
			for _, f := range cp.Fields {
				fields = append(fields, bson.D{{Key: "path", Value: f.Path}, {Key: "from", Value: f.From}})
			}
			copies = append(copies, bson.D{{Key: "via", Value: cp.Via}, {Key: "mode", Value: string(cp.Mode)}, {Key: "fields", Value: fields}})
		}
		d = append(d, bson.E{Key: "copies", Value: copies})
	}
	if c.Aggregates != nil {
		aggs := bson.A{}
		for _, a := range c.Aggregates {
			aggs = append(aggs, bson.D{{Key: "field", Value: a.Field}, {Key: "op", Value: string(a.Op)}, {Key: "from", Value: a.From}, {Key: "by", Value: a.By}, {Key: "of", Value: a.Of}})
		}
		d = append(d, bson.E{Key: "aggregates", Value: aggs})
	}
	if c.Counters != nil {
		ctrs := bson.A{}
		for _, k := range c.Counters {
			ctrs = append(ctrs, bson.D{{Key: "path", Value: k.Path}, {Key: "in", Value: k.In}, {Key: "id", Value: k.ID}, {Key: "field", Value: k.Field}})
		}
		d = append(d, bson.E{Key: "counters", Value: ctrs})
	}
	return d
}

// integrityList parses one of the four lists: each item a mapping, read
// by item.
func (p *parser) integrityList(n *yaml.Node, ptr, key, hint string, item func(n *yaml.Node, ptr string)) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, hint, "%s must be a list, found %s", key, kindName(n))
		return
	}
	for i, it := range n.Content {
		it = deref(it)
		iptr := fmt.Sprintf("%s/%d", ptr, i)
		p.pos[iptr] = posOf(it)
		if p.mapping(it, "a "+strings.TrimSuffix(key, "s"), hint) {
			item(it, iptr)
		}
	}
}

// integrityItem reads an item's keys and reports the required ones
// missing; it returns whether the item had no problem.
func (p *parser) integrityItem(n *yaml.Node, ptr, what string, keys, required []string, fn func(key string, k, v *yaml.Node)) bool {
	errs := len(p.errs)
	seen := map[string]bool{}
	p.each(n, ptr, keys, func(key string, k, v *yaml.Node) {
		seen[key] = true
		fn(key, k, v)
	})
	for _, r := range required {
		if !seen[r] && len(p.errs) == errs {
			p.errorf(n, "add `"+r+": ...`", "%s needs %s", what, r)
		}
	}
	return len(p.errs) == errs
}

// intPath reads a field path value.
func (p *parser) intPath(v *yaml.Node) (string, bool) {
	s, ok := p.str(v, "write a dotted field path such as postId")
	return s, ok && p.checkPath(v, s)
}

// intColl reads a collection name value.
func (p *parser) intColl(v *yaml.Node) (string, bool) {
	s, ok := p.str(v, "write a collection name")
	if !ok {
		return "", false
	}
	if msg, why := collectionNameProblem(s); msg != "" {
		p.errorf(v, "use the collection's real name"+why, "invalid collection name %s: %s", quoteName(s), msg)
		return "", false
	}
	return s, true
}

// intEnum reads one of the values in allowed.
func (p *parser) intEnum(v *yaml.Node, key string, allowed ...string) (string, bool) {
	hint := "write " + strings.Join(allowed, ", ")
	s, ok := p.str(v, hint)
	if ok && !contains(allowed, s) {
		p.errorf(v, hint, "invalid %s %q", key, s)
		return "", false
	}
	return s, ok
}
