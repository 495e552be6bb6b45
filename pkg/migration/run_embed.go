package migration

import (
	"go.yaml.in/yaml/v3"
)

// RunEmbed copies fields of referenced documents into the referencing
// ones (the extended reference pattern; see [Embed]).
const RunEmbed RunKind = "embed"

// Embed copies fields of the documents of collection From that the
// reference at Copy.Via of collection Into names into the referencing
// documents, beside the reference (Copy.Base), as `copies:` declares a
// copy: the same via, mode and fields. The embed also puts that copy (and
// the reference, when the collection declares none at Via) among the
// integrity rules in force ([IntegrityRules]), so `mongomig check`
// checks it afterwards.
type Embed struct {
	Into string `json:"into"`
	From string `json:"from"`
	Copy Copy   `json:"copy"`
}

// Paths are the copied fields' full paths in Into (base.path; for a via
// through an array, the path inside each element).
func (e *Embed) Paths() []string {
	out := make([]string, len(e.Copy.Fields))
	for i, f := range e.Copy.Fields {
		out[i] = f.Path
		if b := e.Copy.Base(); b != "" {
			out[i] = b + "." + f.Path
		}
	}
	return out
}

const embedHint = "write `- embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {name: name, price: price}}` (mode: mirror or snapshot; fields: copy path beside via -> source field)"

// embed reads an embed operation: the keys of a `copies:` item (via,
// mode, fields) plus the two collections.
func (p *parser) embed(n *yaml.Node, ptr string) (*Embed, bool) {
	e := &Embed{Copy: Copy{Pos: posOf(n)}}
	if !p.mapping(n, string(RunEmbed), embedHint) {
		return nil, false
	}
	keys := []string{"into", "via", "from", "mode", "fields"}
	ok := p.integrityItem(n, ptr, "embed", keys, keys, func(key string, k, v *yaml.Node) {
		switch key {
		case "into":
			e.Into, _ = p.intColl(v)
		case "from":
			e.From, _ = p.intColl(v)
		case "via":
			e.Copy.Via, _ = p.intPath(v)
			if e.Copy.Via == "_id" {
				p.errorf(v, "name the field holding the other collection's _id, such as productId or classes._id", "an embed's via cannot be _id")
			}
		case "mode":
			s, _ := p.intEnum(v, "mode", "mirror", "snapshot")
			e.Copy.Mode = CopyMode(s)
		case "fields":
			e.Copy.Fields = p.copyFields(v, ptr+"/fields")
		}
	})
	if !ok {
		return nil, false
	}
	if len(e.Copy.Fields) == 0 {
		p.errorf(n, embedHint, "an embed needs at least one field")
		return nil, false
	}
	for _, f := range e.Copy.Fields {
		if f.Path == e.Copy.Key() || isPrefix(f.Path, e.Copy.Key()) || isPrefix(e.Copy.Key(), f.Path) {
			p.errorf(n, "copy the source's other fields into paths of their own", "copied field %q overlaps the reference %q", f.Path, e.Copy.Via)
			return nil, false
		}
		if f.From == "_id" {
			p.errorf(n, "the reference holds the _id already: copy the source's other fields", "copied field %q copies the source's _id", f.Path)
			return nil, false
		}
	}
	return e, true
}

// embedRules adds the copy (and, when the collection declares none at its
// via, the reference) of m's embeds to the rules in force: the copy is
// checked as if m's file declared it at the end of the collection's
// `copies:` list, and a later file's `copies:` list replaces it as it
// replaces any (declare it there to keep it).
func embedRules(m *Migration, rule func(coll string) *Integrity) {
	for _, op := range m.Run {
		e := op.Embed
		if op.Kind != RunEmbed || e == nil {
			continue
		}
		r := rule(e.Into)
		r.Copies = append(append([]Copy{}, r.Copies...), e.Copy)
		if _, ok := r.File["copies"]; !ok {
			r.File["copies"] = m.File
		}
		if _, ok := r.Reference(e.Copy.Via); !ok {
			r.References = append(append([]Reference{}, r.References...), Reference{Path: e.Copy.Via, To: e.From, OnDangling: DanglingReport, Pos: op.Pos})
			if _, ok := r.File["references"]; !ok {
				r.File["references"] = m.File
			}
		}
	}
}
