package inspect

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// FileOptions configure [Inference.File].
type FileOptions struct {
	// Level and Action are the validationLevel and validationAction the
	// baseline declares; defaults moderate and warn, so that adopting a
	// validator rejects no write.
	Level  migration.Level
	Action migration.Action
}

// File renders the inference as a migration file named name: per
// collection the inferred validator and the existing indexes, with
// comments saying what was observed. It holds no document values except
// the string values of small enums, and the examples asked for
// ([InferOptions].Examples).
func (inf *Inference) File(name string, opts FileOptions) ([]byte, error) {
	level, action := bsonx.OrDefault(opts.Level, "moderate"), bsonx.OrDefault(opts.Action, "warn")
	colls := mapping(false)
	var read []string
	for _, ic := range inf.Collections {
		read = append(read, fmt.Sprintf("%s: %s", commentText(ic.Name), readText(ic)))
		k, body, err := inf.section(name, ic, string(level), string(action))
		if err != nil {
			return nil, err
		}
		if body == nil {
			continue
		}
		colls.Content = append(colls.Content, k, body)
	}
	if len(colls.Content) == 0 {
		return nil, fmt.Errorf("database %s has no document and no index to describe: nothing to write", commentText(inf.Database))
	}
	head := fmt.Sprintf("%s: baseline of database %s, inferred by mongomig init.\n"+
		"Documents read: %s.\n"+
		"Review it: the schema describes the documents read, nothing more. validationAction %s\n"+
		"logs failing writes instead of rejecting them; docs/adopting.md says how to tighten.",
		commentText(name), commentText(inf.Database), strings.Join(read, "; "), action)
	out, err := encodeFile(head, colls)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	// What init writes, its own parser must read back.
	if _, err := migration.Parse(checkName, out); err != nil {
		return nil, fmt.Errorf("render %s: the file would not parse (a bug in mongomig init): %w", name, err)
	}
	return out, nil
}

// section renders one collection: its key and body (nil when there is
// nothing to declare), checked on its own with the migration parser. A
// collection the file format cannot hold (its name) is left out with a
// warning; so are examples it cannot hold ($-prefixed field names read
// as Extended JSON).
func (inf *Inference) section(name string, ic *InferredCollection, level, action string) (*yaml.Node, *yaml.Node, error) {
	build := func(examples bool) (*yaml.Node, *yaml.Node, error) {
		body := mapping(false)
		if ic.schema != nil {
			root := inf.stats[ic.Name].root
			js := renderSchema(ic.schema, nil, root)
			body.Content = append(body.Content, key("validator"), withKey(mapping(false), key("$jsonSchema"), js),
				key("validationLevel"), str(level), key("validationAction"), str(action))
		}
		if examples && len(ic.examples) > 0 {
			ex, err := examplesNode(ic.examples)
			if err != nil {
				return nil, nil, fmt.Errorf("render %s: examples of %s: %w", name, commentText(ic.Name), err)
			}
			body.Content = append(body.Content, key("examples"), ex)
		}
		if len(ic.Indexes) > 0 {
			list := &yaml.Node{Kind: yaml.SequenceNode}
			for _, idx := range ic.Indexes {
				list.Content = append(list.Content, indexNode(idx))
			}
			body.Content = append(body.Content, key("indexes"), withKey(mapping(false), key("create"), list))
		}
		k := key(ic.Name)
		k.HeadComment = collectionComment(ic)
		if len(body.Content) == 0 {
			return nil, nil, nil // empty and without indexes: nothing to declare
		}
		return k, body, nil
	}
	k, body, err := build(true)
	if err != nil || body == nil {
		return nil, nil, err
	}
	perr := checkSection(k, body)
	if perr != nil && len(ic.examples) > 0 {
		if k2, body2, _ := build(false); body2 != nil && checkSection(k2, body2) == nil {
			inf.Warnings = append(inf.Warnings, fmt.Sprintf("%s: the examples are left out of the baseline: the migration file format cannot hold them (%s)",
				commentText(ic.Name), firstLine(perr)))
			inf.FromData.Examples -= len(ic.examples)
			return k2, body2, nil
		}
	}
	if perr != nil {
		inf.Warnings = append(inf.Warnings, fmt.Sprintf("%s is left out of the baseline: the migration file format cannot hold it (%s); declare it by hand if mongomig must manage it",
			commentText(ic.Name), firstLine(perr)))
		return nil, nil, nil
	}
	return k, body, nil
}

// checkSection parses a file holding one collection's section.
func checkSection(k, body *yaml.Node) error {
	colls := withKey(mapping(false), k, body)
	b, err := encodeFile("", colls)
	if err != nil {
		return err
	}
	_, err = migration.Parse(checkName, b)
	return err
}

// checkName is the name the rendered bytes are parsed under: the file
// may be named anything (init --out), and the version number changes
// nothing in a lone file's checks.
const checkName = "0001_baseline.yaml"

func encodeFile(head string, colls *yaml.Node) ([]byte, error) {
	doc := mapping(false)
	desc := key("description")
	desc.HeadComment = head
	doc.Content = append(doc.Content, desc, str("Baseline: the existing collections' schemas and indexes, inferred from their documents."),
		key("collections"), colls)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// commentText is a database string as a YAML comment or a message may
// hold it: unchanged when printable on one line, else Go-quoted (no
// newline ends the comment early, no escape reaches a terminal).
func commentText(s string) string { return migration.DisplayName(s) }

func readText(ic *InferredCollection) string {
	switch ic.Read {
	case ReadSample:
		return fmt.Sprintf("a sample of %d of ~%d", ic.Documents, ic.Total)
	case ReadFirst:
		return fmt.Sprintf("the first %d of ~%d in _id order", ic.Documents, ic.Total)
	}
	return fmt.Sprintf("all %d", ic.Documents)
}

func collectionComment(ic *InferredCollection) string {
	c := fmt.Sprintf("%s: read %s documents", commentText(ic.Name), readText(ic))
	if ic.Documents == 0 {
		c += ": empty, no schema inferred"
	}
	for _, m := range ic.MixedTypes {
		c += "\nmixed types at " + m.Path + ": " + typeCounts(m.Types)
	}
	for _, s := range ic.SkippedIndexes {
		c += fmt.Sprintf("\nindex %s is not declared: %s", commentText(s.Name), commentText(s.Reason))
	}
	return c
}

func typeCounts(ts []TypeCount) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %d", t.Type, t.Count)
	}
	return strings.Join(parts, ", ")
}

// renderSchema renders schema d, whose values f describes (nil at the
// root) and whose properties o describes, as YAML with comments.
func renderSchema(d bson.D, f *fieldStats, o *objStats) *yaml.Node {
	m := mapping(true)
	for _, e := range d {
		k := key(e.Key)
		var v *yaml.Node
		switch e.Key {
		case "properties":
			m.Style = 0
			props := mapping(false)
			for _, p := range e.Value.(bson.D) {
				pk := key(p.Key)
				pf := o.fields[p.Key]
				sub := p.Value.(bson.D)
				pk.HeadComment = observed(pf, o.count, hasKey(sub, "enum"))
				props.Content = append(props.Content, pk, renderSchema(sub, pf, pf.object))
			}
			v = props
		case "items":
			m.Style = 0
			k.HeadComment = fmt.Sprintf("items (%d in all): %s", f.items.present, typeList(f.items))
			sub := e.Value.(bson.D)
			if hasKey(sub, "enum") {
				k.HeadComment += "; values " + enumCounts(f.items)
			}
			v = renderSchema(sub, f.items, f.items.object)
		default:
			v = valueNode(e.Value)
		}
		m.Content = append(m.Content, k, v)
	}
	return m
}

// observed is the comment above a property: presence, types with counts,
// array lengths and, when the schema has an enum, its values' counts.
func observed(f *fieldStats, parents int64, enum bool) string {
	pct := 100 * float64(f.present) / float64(max(parents, 1))
	c := fmt.Sprintf("present %s (%d/%d): %s", percent(pct), f.present, parents, typeList(f))
	if len(f.types) > 1 {
		c += " (mixed types)"
	}
	if f.lens != nil {
		lo, med, hi := f.lengths()
		c += fmt.Sprintf("; array length min %d, median %d, max %d", lo, med, hi)
	}
	if enum {
		c += "; values " + enumCounts(f)
	}
	return c
}

func enumCounts(f *fieldStats) string {
	vals := make([]string, 0, len(f.strs))
	for s := range f.strs {
		vals = append(vals, s)
	}
	sort.Strings(vals)
	parts := make([]string, len(vals))
	for i, s := range vals {
		parts[i] = fmt.Sprintf("%q %d", s, f.strs[s])
	}
	return strings.Join(parts, ", ")
}

func hasKey(d bson.D, k string) bool {
	for _, e := range d {
		if e.Key == k {
			return true
		}
	}
	return false
}

func percent(p float64) string {
	if p > 99.9 && p < 100 {
		return "99.9%"
	}
	if p < 0.1 && p > 0 {
		return "<0.1%"
	}
	s := fmt.Sprintf("%.1f", p)
	return strings.TrimSuffix(s, ".0") + "%"
}

func typeList(f *fieldStats) string {
	parts := []string{}
	for _, t := range f.typeNames() {
		parts = append(parts, fmt.Sprintf("%s %d", t, f.types[t]))
	}
	return strings.Join(parts, ", ")
}

func indexNode(idx migration.Index) *yaml.Node {
	m := mapping(true)
	keys := mapping(true)
	for _, k := range idx.Keys {
		keys.Content = append(keys.Content, key(k.Key), valueNode(k.Value))
	}
	m.Content = append(m.Content, key("keys"), keys)
	if idx.Name != migration.DefaultIndexName(idx.Keys) {
		m.Content = append(m.Content, key("name"), str(idx.Name))
	}
	for _, opt := range []struct {
		name string
		on   bool
	}{{"unique", idx.Unique}, {"sparse", idx.Sparse}, {"hidden", idx.Hidden}} {
		if opt.on {
			m.Content = append(m.Content, key(opt.name), valueNode(true))
		}
	}
	if idx.ExpireAfterSeconds != nil {
		m.Content = append(m.Content, key("expireAfterSeconds"), valueNode(*idx.ExpireAfterSeconds))
	}
	if idx.PartialFilterExpression != nil {
		m.Content = append(m.Content, key("partialFilterExpression"), valueNode(idx.PartialFilterExpression))
	}
	if idx.Collation != nil {
		m.Content = append(m.Content, key("collation"), valueNode(idx.Collation))
	}
	return m
}

// valueNode renders a value: strings, numbers and booleans as scalars,
// lists of them as flow sequences, anything else as Extended JSON (which
// is YAML).
func valueNode(v any) *yaml.Node {
	switch x := v.(type) {
	case string:
		return str(x)
	case bool, int32, int64, int:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(x)}
	case bson.A:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, item := range x {
			seq.Content = append(seq.Content, valueNode(item))
		}
		return seq
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	var n yaml.Node
	if err == nil {
		err = yaml.Unmarshal(b, &n)
	}
	if err != nil || len(n.Content) == 0 || len(n.Content[0].Content) < 2 {
		return str(fmt.Sprint(v))
	}
	out := n.Content[0].Content[1]
	out.Style = yaml.FlowStyle
	return out
}

// examplesNode gives each document as an example whose before and after
// are the document itself (the baseline upgrades nothing), in canonical
// Extended JSON so that every value keeps its BSON type, without the
// version field (mongomig sets it; examples leave it out).
func examplesNode(docs []bson.Raw) (*yaml.Node, error) {
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, raw := range docs {
		var d bson.D
		if err := bson.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		kept := d[:0]
		for _, e := range d {
			if e.Key != version.DefaultField {
				kept = append(kept, e)
			}
		}
		b, err := bson.MarshalExtJSON(kept, true, false)
		if err != nil {
			return nil, err
		}
		var n yaml.Node
		if err := yaml.Unmarshal(b, &n); err != nil {
			return nil, err
		}
		doc := n.Content[0]
		doc.Style = yaml.FlowStyle
		item := withKey(mapping(false), key("before"), doc)
		item.Content = append(item.Content, key("after"), doc)
		list.Content = append(list.Content, item)
	}
	list.Content[0].HeadComment = "documents as read (real values: remove personal data before committing)"
	return list, nil
}

func mapping(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func withKey(m, k, v *yaml.Node) *yaml.Node {
	m.Content = append(m.Content, k, v)
	return m
}

func key(s string) *yaml.Node { return str(s) }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
