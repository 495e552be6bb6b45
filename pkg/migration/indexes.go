package migration

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

var (
	indexesKeys = []string{"create", "drop", "change", "rebuild"}
	indexKeys   = []string{"keys", "name", "unique", "sparse", "hidden", "expireAfterSeconds", "partialFilterExpression", "collation"}
	indexTypes  = []string{"text", "2dsphere", "2d", "hashed"}
)

func (p *parser) indexes(n *yaml.Node, ptr string) Indexes {
	var out Indexes
	if !p.mapping(n, "indexes", "write `indexes: {create: [...], drop: [name]}`") {
		return out
	}
	p.each(n, ptr, indexesKeys, func(key string, k, v *yaml.Node) {
		if v.Kind != yaml.SequenceNode {
			p.errorf(v, fmt.Sprintf("write `%s: [...]`", key), "indexes.%s must be a list, found %s", key, kindName(v))
			return
		}
		for i, item := range v.Content {
			item = deref(item)
			iptr := fmt.Sprintf("%s/%s/%d", ptr, key, i)
			p.pos[iptr] = posOf(item)
			switch key {
			case "change":
				if ch, ok := p.indexChange(item, iptr); ok {
					out.Change = append(out.Change, ch)
				}
				continue
			case "rebuild":
				if idx, ok := p.index(item, iptr); ok {
					out.Rebuild = append(out.Rebuild, idx)
				}
				continue
			}
			if key == "drop" {
				if name, ok := p.str(item, "name the index to drop, such as email_1 (see listIndexes)"); ok && p.checkPrintable(item, "index name", name) {
					if name == "_id_" {
						p.errorf(item, "remove it", "the _id index cannot be dropped")
						continue
					}
					out.Drop = append(out.Drop, IndexRef{Name: name, Pos: posOf(item)})
				}
				continue
			}
			if idx, ok := p.index(item, iptr); ok {
				out.Create = append(out.Create, idx)
			}
		}
	})
	names := map[string]Pos{}
	for _, idx := range out.Create {
		if prev, dup := names[idx.Name]; dup {
			p.add(idx.Pos, fmt.Sprintf("give one of them another name (first at line %d)", prev.Line), "two indexes are named %q", idx.Name)
		}
		names[idx.Name] = idx.Pos
	}
	for _, d := range out.Drop {
		if _, both := names[d.Name]; both {
			p.add(d.Pos, "to change an index, drop it in one migration and create the new one in a later one, or give the new one another name", "index %q is both dropped and created", d.Name)
		}
	}
	p.checkIndexChanges(out, names)
	return out
}

func (p *parser) index(n *yaml.Node, ptr string) (Index, bool) {
	idx := Index{Pos: posOf(n)}
	if !p.mapping(n, "an index", "write `{keys: {field: 1}, unique: true}`") {
		return idx, false
	}
	ok, sawKeys := true, false
	p.each(n, ptr, indexKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "keys":
			sawKeys = true
			idx.Keys, ok = p.indexKeySpec(v, ptr+"/keys")
		case "name":
			if idx.Name, _ = p.str(v, "write the index name as a string"); !p.checkPrintable(v, "index name", idx.Name) {
				ok = false
			}
		case "unique":
			idx.Unique = p.boolean(v, key)
		case "sparse":
			idx.Sparse = p.boolean(v, key)
		case "hidden":
			idx.Hidden = p.boolean(v, key)
		case "expireAfterSeconds":
			var s int64
			if v.Tag != "!!int" || v.Decode(&s) != nil || s < 0 || s > 2147483647 {
				p.errorf(v, "write a whole number of seconds between 0 and 2147483647", "invalid expireAfterSeconds %s", kindName(v))
				ok = false
				return
			}
			idx.ExpireAfterSeconds = &s
		case "partialFilterExpression", "collation":
			if !p.mapping(v, key, "write it as a mapping") {
				ok = false
				return
			}
			x, good := p.value(v, ptr+"/"+key)
			if !good {
				ok = false
				return
			}
			if key == "collation" {
				idx.Collation = x.(bson.D)
			} else {
				idx.PartialFilterExpression = x.(bson.D)
			}
		}
	})
	if !sawKeys {
		p.errorf(n, "write `keys: {field: 1}` (1 ascending, -1 descending)", "index has no keys")
		return idx, false
	}
	if ok && idx.Name == "" {
		idx.Name = DefaultIndexName(idx.Keys)
	}
	return idx, ok
}

func (p *parser) indexKeySpec(n *yaml.Node, ptr string) (bson.D, bool) {
	const hint = "write `keys: {field: 1, other: -1}`; 1 is ascending, -1 descending, or one of text, 2dsphere, 2d, hashed"
	if !p.mapping(n, "keys", hint) {
		return nil, false
	}
	if len(n.Content) == 0 {
		p.errorf(n, hint, "index keys are empty")
		return nil, false
	}
	var d bson.D
	ok := true
	p.each(n, ptr, nil, func(field string, k, v *yaml.Node) {
		if !p.checkIndexField(k, field) {
			ok = false
			return
		}
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!int" && (v.Value == "1" || v.Value == "-1"):
			d = append(d, bson.E{Key: field, Value: map[string]int32{"1": 1, "-1": -1}[v.Value]})
		case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && contains(indexTypes, v.Value):
			d = append(d, bson.E{Key: field, Value: v.Value})
		default:
			p.errorf(v, hint, "invalid index direction %s for %q", kindName(v), field)
			ok = false
		}
	})
	return d, ok
}

func (p *parser) checkIndexField(n *yaml.Node, field string) bool {
	if !p.checkPrintable(n, "index field", field) {
		return false
	}
	for _, seg := range strings.Split(field, ".") {
		if seg == "" || strings.HasPrefix(seg, "$") {
			p.errorf(n, "write a dotted field path such as contact.email", "invalid index field %q", field)
			return false
		}
	}
	return true
}

// DefaultIndexName is the name MongoDB gives an index with these keys when
// none is given: each field and its direction joined by underscores
// ("contact.email_1_createdAt_-1").
func DefaultIndexName(keys bson.D) string {
	parts := make([]string, 0, 2*len(keys))
	for _, e := range keys {
		parts = append(parts, e.Key, fmt.Sprint(e.Value))
	}
	return strings.Join(parts, "_")
}
