package migration

import (
	"go.yaml.in/yaml/v3"
)

const (
	referencesHint = "write a list: `references: [{path: postId, to: posts, onDangling: report}]` (onDangling: report, unset or delete; default report)"
	copiesHint     = "write a list: `copies: [{via: classes._id, mode: mirror, fields: {credits: credits}}]` (mode: mirror or snapshot; fields: copy path beside via -> source field)"
	aggregatesHint = "write a list: `aggregates: [{field: commentCount, op: count, from: comments, by: postId}]` (op: count, sum, min or max; sum, min and max need `of: FIELD`)"
	countersHint   = "write a list: `counters: [{path: number, in: counters, id: orders, field: seq}]`"
)

func (p *parser) references(n *yaml.Node, ptr string) []Reference {
	out := []Reference{}
	p.integrityList(n, ptr, "references", referencesHint, func(it *yaml.Node, iptr string) {
		r := Reference{OnDangling: DanglingReport, Pos: posOf(it)}
		ok := p.integrityItem(it, iptr, "a reference", []string{"path", "to", "onDangling"}, []string{"path", "to"}, func(key string, k, v *yaml.Node) {
			switch key {
			case "path":
				r.Path, _ = p.intPath(v)
				if r.Path == "_id" {
					p.errorf(v, "name the field holding the other collection's _id", "a reference's path cannot be _id")
				}
			case "to":
				r.To, _ = p.intColl(v)
			case "onDangling":
				s, _ := p.intEnum(v, "onDangling", "report", "unset", "delete")
				r.OnDangling = Dangling(s)
			}
		})
		for _, prev := range out {
			if ok && prev.Path == r.Path {
				p.errorf(it, "declare each path once", "reference %q is declared twice (first at line %d)", r.Path, prev.Pos.Line)
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	})
	return out
}

func (p *parser) copies(n *yaml.Node, ptr string) []Copy {
	out := []Copy{}
	p.integrityList(n, ptr, "copies", copiesHint, func(it *yaml.Node, iptr string) {
		c := Copy{Pos: posOf(it)}
		ok := p.integrityItem(it, iptr, "a copy", []string{"via", "mode", "fields"}, []string{"via", "mode", "fields"}, func(key string, k, v *yaml.Node) {
			switch key {
			case "via":
				c.Via, _ = p.intPath(v)
			case "mode":
				s, _ := p.intEnum(v, "mode", "mirror", "snapshot")
				c.Mode = CopyMode(s)
			case "fields":
				c.Fields = p.copyFields(v, iptr+"/fields")
			}
		})
		if ok && len(c.Fields) == 0 {
			p.errorf(it, copiesHint, "a copy needs at least one field")
			ok = false
		}
		for _, f := range c.Fields {
			if ok && (f.Path == c.Key() || isPrefix(f.Path, c.Key()) || isPrefix(c.Key(), f.Path)) {
				p.errorf(it, "copy the source's other fields: the reference itself is checked by references", "copied field %q overlaps the reference %q", f.Path, c.Via)
				ok = false
			}
		}
		if ok {
			out = append(out, c)
		}
	})
	return out
}

func (p *parser) copyFields(n *yaml.Node, ptr string) []CopyField {
	if !p.mapping(n, "fields", "write a mapping from each copy's path (beside via) to the source document's field: `fields: {credits: credits, title: name}`") {
		return nil
	}
	var out []CopyField
	p.each(n, ptr, nil, func(key string, k, v *yaml.Node) {
		if !p.checkPath(k, key) {
			return
		}
		from, ok := p.intPath(v)
		if !ok {
			return
		}
		for _, prev := range out {
			if isPrefix(prev.Path, key) || isPrefix(key, prev.Path) {
				p.errorf(k, "copy each field once", "copied field %q overlaps %q", key, prev.Path)
				return
			}
		}
		out = append(out, CopyField{Path: key, From: from, Pos: posOf(k)})
	})
	return out
}

func (p *parser) aggregates(n *yaml.Node, ptr string) []Aggregate {
	out := []Aggregate{}
	p.integrityList(n, ptr, "aggregates", aggregatesHint, func(it *yaml.Node, iptr string) {
		a := Aggregate{Pos: posOf(it)}
		ok := p.integrityItem(it, iptr, "an aggregate", []string{"field", "op", "from", "by", "of"}, []string{"field", "op", "from", "by"}, func(key string, k, v *yaml.Node) {
			switch key {
			case "field":
				a.Field, _ = p.intPath(v)
			case "op":
				s, _ := p.intEnum(v, "op", "count", "sum", "min", "max")
				a.Op = AggOp(s)
			case "from":
				a.From, _ = p.intColl(v)
			case "by":
				a.By, _ = p.intPath(v)
			case "of":
				a.Of, _ = p.intPath(v)
			}
		})
		switch {
		case !ok:
		case a.Op == AggCount && a.Of != "":
			p.errorf(it, "remove `of:`: count counts documents", "a count aggregate takes no of")
		case a.Op != AggCount && a.Of == "":
			p.errorf(it, "add `of: FIELD`, the child field to "+string(a.Op), "a %s aggregate needs of", a.Op)
		case a.Field == "_id":
			p.errorf(it, "store the aggregate in a field of its own", "an aggregate cannot be stored in _id")
		default:
			for _, prev := range out {
				if prev.Field == a.Field || isPrefix(prev.Field, a.Field) || isPrefix(a.Field, prev.Field) {
					p.errorf(it, "store each aggregate in a field of its own", "aggregate field %q overlaps %q (line %d)", a.Field, prev.Field, prev.Pos.Line)
					return
				}
			}
			out = append(out, a)
		}
	})
	return out
}

func (p *parser) counters(n *yaml.Node, ptr string) []Counter {
	out := []Counter{}
	p.integrityList(n, ptr, "counters", countersHint, func(it *yaml.Node, iptr string) {
		c := Counter{Pos: posOf(it)}
		ok := p.integrityItem(it, iptr, "a counter", []string{"path", "in", "id", "field"}, []string{"path", "in", "id", "field"}, func(key string, k, v *yaml.Node) {
			switch key {
			case "path":
				c.Path, _ = p.intPath(v)
			case "in":
				c.In, _ = p.intColl(v)
			case "id":
				if v.Kind != yaml.ScalarNode {
					p.errorf(v, "write the counter document's _id: a string or a number", "invalid counter id %s", kindName(v))
					return
				}
				c.ID, _ = p.scalar(v)
			case "field":
				c.Field, _ = p.intPath(v)
				if c.Field == "_id" {
					p.errorf(v, "name the counter document's sequence field, such as seq", "a counter's field cannot be _id")
				}
			}
		})
		if ok {
			out = append(out, c)
		}
	})
	return out
}
