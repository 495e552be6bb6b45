package integrity

import (
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A repair reads each collection once for all of its rules: a pass. The
// references, copies and aggregates of one collection are one pass: it
// reads a batch of the collection (Options.BatchSize documents, _id
// order, the fields every rule needs), fetches the documents the batch
// names with one $in per referenced collection (shared by a reference
// and the copies beside it), groups the children of each aggregate, and
// evaluates every rule on each document of the batch, document by
// document (a document's findings in rule order). A counter is a pass of
// its own (one document). A pass of one rule scans as check does (a
// reference with the server's $lookup).
//
// A pass is stored and leased under the name of its last rule, as a rule
// was (resume.go, ranges.go: "$repair$<rule>", its plan, its ranges and
// their leases): the pass is done when its last rule is, as the
// collection was when its rules were walked one by one (so the progress
// a repair of one rule at a time left, its earlier rules done, is the
// pass's). A rule added to the collection while a repair was stopped is
// walked from where the pass stopped, like the others; the next repair,
// which starts over, walks it whole.
type pass struct {
	rules []rule // one collection's rules, in rule order
}

// passesOf groups rules into passes: each collection's rules but its
// counters in one, at the place of its first rule; a counter alone.
func passesOf(rules []rule) []*pass {
	var out []*pass
	byColl := map[string]*pass{}
	for _, r := range rules {
		in := r.info()
		if in.Kind == KindCounter {
			out = append(out, &pass{rules: []rule{r}})
			continue
		}
		if p := byColl[in.Collection]; p != nil {
			p.rules = append(p.rules, r)
			continue
		}
		p := &pass{rules: []rule{r}}
		byColl[in.Collection] = p
		out = append(out, p)
	}
	return out
}

// name is the name the pass is stored and leased under: its last rule's.
func (p *pass) name() string { return p.rules[len(p.rules)-1].info().Rule }

// String names every rule of the pass, for errors.
func (p *pass) String() string {
	names := make([]string, len(p.rules))
	for i, r := range p.rules {
		names[i] = r.info().Rule
	}
	return strings.Join(names, " + ")
}

// coll is the collection the pass reads (a counter's: the counter's).
func (p *pass) coll() string { return p.rules[0].info().Collection }

func (p *pass) counter() bool { return p.rules[0].info().Kind == KindCounter }

// scan reads the documents of filter and emits the findings, a
// document's together; batchEnd is told the last _id of each batch once
// its findings are emitted (a pass of one rule: never).
//
// carry, when set, names copy fixes written before the batch whose
// sources the batch's $in fetches too (sources.go): it is told which
// moved, before the batch's findings are emitted.
func (p *pass) scan(ctx context.Context, c *Checker, filter bson.D, emit func(Finding), batchEnd func(last bson.RawValue) error, carry *carrier) error {
	if len(p.rules) == 1 {
		_, _, err := p.rules[0].scan(ctx, c, filter, emit)
		return err
	}
	method := MethodServer
	if c.opts.ClientOnly {
		method = MethodClient
	}
	_, err := c.batches(ctx, p.coll(), filter, p.projection(), func(docs []bson.Raw) error {
		if err := p.batch(ctx, c, docs, &method, emit, carry); err != nil {
			return err
		}
		if batchEnd == nil {
			return nil
		}
		return batchEnd(docs[len(docs)-1].Lookup("_id"))
	})
	return err
}

// projection is every rule's fields, by their top-level field (a path
// and one below it in one projection is a path collision).
func (p *pass) projection() bson.D {
	var tops []string
	add := func(path string) {
		top, _, _ := strings.Cut(path, ".")
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
	}
	for _, r := range p.rules {
		switch r := r.(type) {
		case *refRule:
			add(r.ref.Path)
		case *copyRule:
			for _, e := range r.projection() {
				add(e.Key)
			}
		case *aggRule:
			add(r.agg.Field)
		}
	}
	out := bson.D{}
	for _, t := range tops {
		out = append(out, bson.E{Key: t, Value: 1})
	}
	return out
}

// batch evaluates every rule on docs.
func (p *pass) batch(ctx context.Context, c *Checker, docs []bson.Raw, method *string, emit func(Finding), carry *carrier) error {
	var carried []*fix
	if carry != nil {
		carried = carry.fixes()
	}
	joined, err := p.join(ctx, c, docs, carried)
	if err != nil {
		return err
	}
	if len(carried) > 0 {
		if err := carry.moved(movedIn(carried, joined)); err != nil {
			return err
		}
	}
	ids := make(bson.A, len(docs))
	for i, d := range docs {
		ids[i] = d.Lookup("_id")
	}
	aggs, err := p.aggregates(ctx, c, ids, method)
	if err != nil {
		return err
	}
	for _, d := range docs {
		for i, r := range p.rules {
			switch r := r.(type) {
			case *refRule:
				r.checkDoc(d, joined[r.ref.To], emit)
			case *copyRule:
				r.checkDoc(d, joined[r.to], emit)
			case *aggRule:
				if f, bad := r.compare(d, aggs[i]); bad {
					emit(f)
				}
			}
		}
	}
	return nil
}

// aggregates are the values of the pass's aggregates for the parents
// ids, by rule index: one $group for the aggregates of one children's
// collection and key; folded on the client, rule by rule, where the
// server has no $group.
func (p *pass) aggregates(ctx context.Context, c *Checker, ids bson.A, method *string) ([]map[string]bson.RawValue, error) {
	out := make([]map[string]bson.RawValue, len(p.rules))
	var keys []string
	sets := map[string][]int{}
	for i, r := range p.rules {
		if a, ok := r.(*aggRule); ok {
			k := a.agg.From + "\x00" + a.agg.By
			if sets[k] == nil {
				keys = append(keys, k)
			}
			sets[k] = append(sets[k], i)
		}
	}
	for _, k := range keys {
		rs := make([]*aggRule, len(sets[k]))
		for j, i := range sets[k] {
			rs[j] = p.rules[i].(*aggRule)
		}
		if *method == MethodServer {
			got, err := groupMany(ctx, c, rs, ids)
			if err == nil {
				for j, i := range sets[k] {
					out[i] = got[j]
				}
				continue
			}
			if !notSupported(err) {
				return nil, err
			}
			*method = MethodClient
		}
		for j, i := range sets[k] {
			got, err := rs[j].fold(ctx, c, ids)
			if err != nil {
				return nil, err
			}
			out[i] = got
		}
	}
	return out, nil
}

// join fetches the documents docs name, one $in per referenced
// collection, with the fields the copies from it need.
func (p *pass) join(ctx context.Context, c *Checker, docs []bson.Raw, carried []*fix) (map[string]map[string]bson.Raw, error) {
	type need struct {
		ids    []bson.RawValue
		fields []string
	}
	needs := map[string]*need{}
	var order []string
	want := func(coll string) *need {
		if n := needs[coll]; n != nil {
			return n
		}
		needs[coll] = &need{}
		order = append(order, coll)
		return needs[coll]
	}
	for _, r := range p.rules {
		switch r := r.(type) {
		case *refRule:
			n := want(r.ref.To)
			for _, d := range docs {
				n.ids = append(n.ids, refValues(d, r.ref.Path)...)
			}
		case *copyRule:
			n := want(r.to)
			if top, _, _ := strings.Cut(r.field.From, "."); !slices.Contains(n.fields, top) {
				n.fields = append(n.fields, top)
			}
			n.ids = append(n.ids, r.sources(docs)...)
		}
	}
	for _, fx := range carried {
		if n := needs[fx.source.coll]; n != nil {
			n.ids = append(n.ids, fx.source.id)
		}
	}
	out := map[string]map[string]bson.Raw{}
	for _, coll := range order {
		n := needs[coll]
		proj := bson.D{{Key: "_id", Value: 1}}
		for _, f := range n.fields {
			if f != "_id" {
				proj = append(proj, bson.E{Key: f, Value: 1})
			}
		}
		got, err := c.fetch(ctx, coll, distinct(n.ids), proj)
		if err != nil {
			return nil, err
		}
		out[coll] = got
	}
	return out, nil
}

// rescan re-reads the document id for every rule of the pass.
func (p *pass) rescan(ctx context.Context, c *Checker, id bson.RawValue) ([]Finding, error) {
	var out []Finding
	err := p.scan(ctx, c, bson.D{{Key: "_id", Value: id}}, func(f Finding) { out = append(out, f) }, nil, nil)
	return out, err
}

// findingKey names a finding within its document: its rule and path
// (and, for a dangling reference, the value).
func findingKey(f Finding) string {
	k := f.Rule + "\x00" + f.Path
	if f.Problem == ProblemDangling {
		k += "\x00" + string(f.Stored)
	}
	return k
}
