package migration

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

var (
	optionKeys     = []string{"capped", "timeseries", "expireAfterSeconds", "clusteredIndex", "collation", "changeStreamPreAndPostImages"}
	cappedKeys     = []string{"size", "max"}
	timeseriesKeys = []string{"timeField", "metaField", "granularity"}
	changeKeys     = []string{"name", "expireAfterSeconds", "hidden"}
	viewKeys       = []string{"viewOn", "pipeline", "drop"}
)

// Limits MongoDB puts on a capped collection (collection_options.cpp):
// size at most 1 PB, max below 2^31.
const (
	MaxCappedSize = 1 << 50
	MaxCappedMax  = 1<<31 - 1
)

func (p *parser) collectionOptions(n *yaml.Node, ptr string) *CollectionOptions {
	o := &CollectionOptions{Pos: posOf(n)}
	if !p.mapping(n, "options", "write `options: {capped: {size: 1048576}}` (see docs/file-format.md, Collection lifecycle)") {
		return nil
	}
	p.each(n, ptr, optionKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "capped":
			o.Capped = p.capped(v, ptr+"/capped")
		case "timeseries":
			o.Timeseries = p.timeseries(v, ptr+"/timeseries")
		case "expireAfterSeconds":
			o.ExpireAfterSeconds = p.seconds(v)
		case "clusteredIndex":
			if p.boolean(v, key) {
				o.ClusteredIndex = true
			} else if v.Tag == "!!bool" {
				p.errorf(v, "remove the key: a collection is not clustered unless created so", "clusteredIndex: false declares nothing")
			}
		case "collation":
			o.Collation = p.collation(v, ptr+"/collation")
		case "changeStreamPreAndPostImages":
			b := p.boolean(v, key)
			o.PrePostImages = &b
		}
	})
	switch {
	case o.Capped != nil && o.Timeseries != nil:
		p.errorf(n, "use one: a capped collection keeps the newest bytes, a time-series collection expires by time (expireAfterSeconds)", "a time-series collection cannot be capped (MongoDB refuses the create)")
	case o.Capped != nil && o.ClusteredIndex:
		p.errorf(n, "use one: a capped collection keeps insertion order, a clustered one _id order", "a clustered collection cannot be capped (MongoDB refuses it outside its own collections)")
	case o.ExpireAfterSeconds != nil && o.Timeseries == nil && !o.ClusteredIndex:
		p.errorf(n, "add timeseries or clusteredIndex: true, or put the expiry on an index (indexes.create with expireAfterSeconds, a TTL index)", "options.expireAfterSeconds needs a time-series or clustered collection")
	}
	return o
}

func (p *parser) capped(n *yaml.Node, ptr string) *Capped {
	c := &Capped{Pos: posOf(n)}
	if !p.mapping(n, "capped", "write `capped: {size: BYTES, max: DOCUMENTS}`") {
		return nil
	}
	sawSize := false
	p.each(n, ptr, cappedKeys, func(key string, k, v *yaml.Node) {
		limit := int64(MaxCappedSize)
		if key == "max" {
			limit = MaxCappedMax
		}
		var x int64
		if v.Tag != "!!int" || v.Decode(&x) != nil || x < 1 || x > limit {
			p.errorf(v, fmt.Sprintf("write a whole number between 1 and %d (MongoDB's limit)", limit), "invalid capped %s %s", key, kindName(v))
			return
		}
		if key == "size" {
			c.Size, sawSize = x, true
		} else {
			c.Max = x
		}
	})
	if !sawSize {
		p.errorf(n, "write `capped: {size: BYTES}`: MongoDB needs the size of a capped collection; max is optional", "capped has no size")
		return nil
	}
	return c
}

func (p *parser) timeseries(n *yaml.Node, ptr string) *Timeseries {
	t := &Timeseries{Pos: posOf(n)}
	if !p.mapping(n, "timeseries", "write `timeseries: {timeField: at, metaField: source, granularity: minutes}`") {
		return nil
	}
	p.each(n, ptr, timeseriesKeys, func(key string, k, v *yaml.Node) {
		s, ok := p.str(v, "write a string")
		if !ok {
			return
		}
		switch key {
		case "timeField", "metaField":
			if s == "" || s == "_id" || strings.ContainsAny(s, ".$") {
				p.errorf(v, "name a top-level field other than _id", "invalid timeseries %s %q", key, s)
				return
			}
			if key == "timeField" {
				t.TimeField = s
			} else {
				t.MetaField = s
			}
		case "granularity":
			if !contains(Granularities, s) {
				p.errorf(v, "write seconds, minutes or hours", "invalid timeseries granularity %q", s)
				return
			}
			t.Granularity = s
		}
	})
	switch {
	case t.TimeField == "":
		p.errorf(n, "write `timeField: FIELD`, the field that holds each document's date", "timeseries has no timeField")
		return nil
	case t.TimeField == t.MetaField:
		p.errorf(n, "give the time and the metadata fields different names", "timeseries timeField and metaField are both %q", t.TimeField)
		return nil
	}
	return t
}

func (p *parser) seconds(v *yaml.Node) *int64 {
	var s int64
	if v.Tag != "!!int" || v.Decode(&s) != nil || s < 0 || s > 2147483647 {
		p.errorf(v, "write a whole number of seconds between 0 and 2147483647", "invalid expireAfterSeconds %s", kindName(v))
		return nil
	}
	return &s
}

func (p *parser) collation(v *yaml.Node, ptr string) bson.D {
	if !p.mapping(v, "collation", "write `collation: {locale: en, strength: 2}`") {
		return nil
	}
	x, ok := p.value(v, ptr)
	if !ok {
		return nil
	}
	d := x.(bson.D)
	for _, e := range d {
		if e.Key == "locale" {
			return d
		}
	}
	p.errorf(v, "add `locale: en` (or simple for binary comparison)", "collation has no locale")
	return nil
}

func (p *parser) indexChange(n *yaml.Node, ptr string) (IndexChange, bool) {
	ch := IndexChange{Pos: posOf(n)}
	if !p.mapping(n, "an index change", "write `{name: lastSeen_1, expireAfterSeconds: 7200}` or `{name: email_1, hidden: true}`") {
		return ch, false
	}
	ok := true
	p.each(n, ptr, changeKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			var good bool
			if ch.Name, good = p.str(v, "name the index, such as email_1 (see listIndexes)"); !good || !p.checkPrintable(v, "index name", ch.Name) {
				ok = false
			}
		case "expireAfterSeconds":
			if ch.ExpireAfterSeconds = p.seconds(v); ch.ExpireAfterSeconds == nil {
				ok = false
			}
		case "hidden":
			b := p.boolean(v, key)
			ch.Hidden = &b
		}
	})
	switch {
	case !ok:
		return ch, false
	case ch.Name == "":
		p.errorf(n, "add `name: INDEX`", "an index change names no index")
		return ch, false
	case ch.Name == "_id_" && ch.Hidden != nil:
		p.errorf(n, "remove it: MongoDB refuses to hide the _id index", "the _id index cannot be hidden")
		return ch, false
	case ch.ExpireAfterSeconds == nil && ch.Hidden == nil:
		p.errorf(n, "add expireAfterSeconds or hidden: those are what collMod changes in place; other changes need indexes.rebuild", "index change %q changes nothing", ch.Name)
		return ch, false
	}
	return ch, true
}

// checkIndexChanges refuses an index named twice across one file's
// create, drop, change and rebuild lists (names: the created ones).
func (p *parser) checkIndexChanges(out Indexes, names map[string]Pos) {
	seen := map[string]string{}
	for n := range names {
		seen[n] = "created"
	}
	for _, d := range out.Drop {
		seen[d.Name] = "dropped"
	}
	for _, idx := range out.Rebuild {
		if what, dup := seen[idx.Name]; dup {
			p.add(idx.Pos, "rebuild drops and builds the index: declare it once", "index %q is both %s and rebuilt", idx.Name, what)
			continue
		}
		seen[idx.Name] = "rebuilt"
	}
	for _, ch := range out.Change {
		if what, dup := seen[ch.Name]; dup {
			p.add(ch.Pos, "declare the final options where the index is "+what+", or change it in a later migration", "index %q is both %s and changed", ch.Name, what)
			continue
		}
		seen[ch.Name] = "changed"
	}
}

func (p *parser) views(n *yaml.Node) []*View {
	if !p.mapping(n, "views", "write one entry per view: `views: {active_users: {viewOn: users, pipeline: [...]}}`") {
		return nil
	}
	var out []*View
	p.each(n, "/views", nil, func(name string, k, v *yaml.Node) {
		if msg, why := collectionNameProblem(name); msg != "" {
			p.errorf(k, "use the view's real name"+why, "invalid view name %s: %s", quoteName(name), msg)
			return
		}
		if x := p.view(name, k, v); x != nil {
			out = append(out, x)
		}
	})
	return out
}

func (p *parser) view(name string, k, n *yaml.Node) *View {
	const hint = "write `{viewOn: COLLECTION, pipeline: [{$match: {...}}]}`, or `{drop: true}`"
	v := &View{Name: name, Pos: posOf(k)}
	ptr := "/views/" + escapePtr(name)
	if !p.mapping(n, fmt.Sprintf("view %q", name), hint) {
		return nil
	}
	ok := true
	p.each(n, ptr, viewKeys, func(key string, k, x *yaml.Node) {
		switch key {
		case "viewOn":
			s, good := p.str(x, "name the collection (or view) the view reads")
			if msg, _ := collectionNameProblem(s); good && msg != "" {
				p.errorf(x, "name the collection the view reads", "invalid viewOn %s: %s", quoteName(s), msg)
				good = false
			}
			v.ViewOn, ok = s, ok && good
		case "pipeline":
			if v.Pipeline = p.pipeline(x, ptr+"/pipeline"); v.Pipeline == nil {
				ok = false
			}
		case "drop":
			v.Drop = p.boolean(x, key)
			if !v.Drop && x.Tag == "!!bool" {
				p.errorf(x, "remove the key", "drop: false declares nothing")
			}
		}
	})
	switch {
	case v.Drop && (v.ViewOn != "" || v.Pipeline != nil):
		p.errorf(n, "a dropped view has no definition: write `{drop: true}` alone", "view %q is both dropped and defined", name)
		return nil
	case !v.Drop && v.ViewOn == "":
		p.errorf(n, hint, "view %q has no viewOn", name)
		return nil
	case !v.Drop && v.ViewOn == name:
		p.errorf(n, "name another collection", "view %q reads itself", name)
		return nil
	}
	if !ok {
		return nil
	}
	return v
}

// pipeline reads an aggregation pipeline: a list of stages, each a
// mapping with one $-key. What the stages say is the server's to check.
func (p *parser) pipeline(n *yaml.Node, ptr string) bson.A {
	const hint = "write `pipeline: [{$match: {active: true}}, {$project: {password: 0}}]`"
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, hint, "pipeline must be a list of stages, found %s", kindName(n))
		return nil
	}
	for _, item := range n.Content {
		item = deref(item)
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 || !strings.HasPrefix(deref(item.Content[0]).Value, "$") {
			p.errorf(item, hint, "a pipeline stage is a mapping with one $-key, such as {$match: {...}}, found %s", kindName(item))
			return nil
		}
	}
	x, ok := p.value(n, ptr)
	if !ok {
		return nil
	}
	return x.(bson.A)
}
