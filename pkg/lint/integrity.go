package lint

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/suggest"
	"github.com/mongomig/mongomig/pkg/migration"
)

// lintIntegrity checks the integrity rules in force after ms against each
// other and the validators: a copy's via must be a declared reference; no
// field is claimed by two rules (a snapshot a mirror also writes, an
// aggregate a copy writes); a collection a rule reads is declared by some
// file; a validator allows the values a repair writes.
func (r *Report) lintIntegrity(ms []*migration.Migration) {
	var ok []*migration.Migration
	for _, m := range ms {
		if !m.Broken {
			ok = append(ok, m)
		}
	}
	declared := declaredCollections(ok)
	for _, in := range migration.IntegrityRules(ok) {
		at := func(list string, pos migration.Pos, sev Severity, msg, hint string) {
			r.add(Problem{Severity: sev, File: in.File[list], Line: pos.Line, Column: pos.Column, Collection: in.Collection, Message: msg, Hint: hint})
		}
		known := func(list string, pos migration.Pos, what, coll string) {
			if slices.Contains(declared, coll) {
				return
			}
			hint := fmt.Sprintf("declare %s in a migration (an index or a validator on it), or fix the name: check and repair take a collection that does not exist for an empty one (every reference to it dangling, every aggregate over it 0 or missing)", coll)
			if w, ok := suggest.Name(coll, declared); ok {
				hint = fmt.Sprintf("did you mean %q?", w)
			}
			at(list, pos, SeverityWarning, fmt.Sprintf("%s names collection %q, which no migration declares", what, coll), hint)
		}
		for _, ref := range in.References {
			known("references", ref.Pos, fmt.Sprintf("reference %q", ref.Path), ref.To)
		}
		for _, a := range in.Aggregates {
			known("aggregates", a.Pos, fmt.Sprintf("aggregate %q", a.Field), a.From)
		}
		for _, c := range in.Counters {
			known("counters", c.Pos, fmt.Sprintf("counter %q", c.Path), c.In)
		}
		r.lintClaims(in, at)
		r.lintIntegrityTypes(ok, in, at)
	}
}

type atFunc func(list string, pos migration.Pos, sev Severity, msg, hint string)

// lintClaims: each copy's via is a reference; each field is written by
// one rule.
func (r *Report) lintClaims(in *migration.Integrity, at atFunc) {
	type claim struct {
		path, what string
	}
	var claims []claim
	claimed := func(list string, pos migration.Pos, path, what string) {
		for _, c := range claims {
			if c.path == path || strings.HasPrefix(path, c.path+".") || strings.HasPrefix(c.path, path+".") {
				hint := "declare each field in one rule"
				if strings.Contains(what, "snapshot") || strings.Contains(c.what, "snapshot") {
					hint = "a snapshot is never rewritten and a mirror always is: decide which the field is"
				}
				at(list, pos, SeverityError, fmt.Sprintf("field %q is claimed by %s and by %s", path, c.what, what), hint)
				return
			}
		}
		claims = append(claims, claim{path, what})
	}
	for _, c := range in.Copies {
		ref, ok := in.Reference(c.Via)
		if !ok {
			hint := fmt.Sprintf("add `references: [{path: %s, to: COLLECTION}]`: it names the collection the copy comes from", c.Via)
			var paths []string
			for _, r := range in.References {
				paths = append(paths, r.Path)
			}
			if w, ok := suggest.Name(c.Via, paths); ok {
				hint = fmt.Sprintf("did you mean %q, the reference the collection declares?", w)
			}
			at("copies", c.Pos, SeverityError, fmt.Sprintf("copy via %q: the collection declares no reference at %q", c.Via, c.Via), hint)
			continue
		}
		for _, f := range c.Fields {
			claimed("copies", c.Pos, joinPath(c.Base(), f.Path), fmt.Sprintf("a %s copy of %s.%s", c.Mode, ref.To, f.From))
		}
	}
	for _, a := range in.Aggregates {
		claimed("aggregates", a.Pos, a.Field, fmt.Sprintf("the %s aggregate of %s", a.Op, a.From))
	}
}

// lintIntegrityTypes: the validators allow what a repair writes: a number
// for count and sum, the source's type for a copy.
func (r *Report) lintIntegrityTypes(ms []*migration.Migration, in *migration.Integrity, at atFunc) {
	own := lastSchema(ms, in.Collection)
	for _, a := range in.Aggregates {
		if a.Op != migration.AggCount && a.Op != migration.AggSum {
			continue
		}
		if types := schemaTypes(own, a.Field); types != nil && !slices.ContainsFunc(types, isNumberType) {
			at("aggregates", a.Pos, SeverityError, fmt.Sprintf("the validator of %q allows %s at %q, where the %s aggregate stores a number", in.Collection, strings.Join(types, ", "), a.Field, a.Op),
				"allow a number there (bsonType: [int, long]) or store the aggregate in another field")
		}
	}
	for _, c := range in.Copies {
		ref, ok := in.Reference(c.Via)
		if !ok {
			continue
		}
		src := lastSchema(ms, ref.To)
		for _, f := range c.Fields {
			path := joinPath(c.Base(), f.Path)
			mine, theirs := schemaTypes(own, path), schemaTypes(src, f.From)
			if mine == nil || theirs == nil || slices.ContainsFunc(theirs, func(t string) bool { return typeAllows(mine, t) }) {
				continue
			}
			at("copies", c.Pos, SeverityError, fmt.Sprintf("%q copies %s.%s (%s), but the validator of %q allows %s there", path, ref.To, f.From, strings.Join(theirs, ", "), in.Collection, strings.Join(mine, ", ")),
				"make the two validators agree on the field's type")
		}
	}
}

func joinPath(base, path string) string {
	if base == "" {
		return path
	}
	return base + "." + path
}

// declaredCollections are the collections the files declare or create.
func declaredCollections(ms []*migration.Migration) []string {
	var out []string
	for _, m := range ms {
		for _, c := range m.Collections {
			out = append(out, c.Name)
		}
		for _, op := range m.Run {
			out = append(out, op.Collections()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lastSchema is the $jsonSchema of coll's last validator, or nil.
func lastSchema(ms []*migration.Migration, coll string) bson.D {
	var out bson.D
	for _, m := range ms {
		if c := m.Collection(coll); c != nil && c.Validator != nil {
			out, _ = c.JSONSchema()
		}
	}
	return out
}

// schemaTypes are the bsonTypes the schema declares at a dotted path
// (through properties, and items of arrays), or nil when it says nothing.
func schemaTypes(schema bson.D, path string) []string {
	cur := schema
	for _, seg := range strings.Split(path, ".") {
		if items, ok := lookupD(cur, "items"); ok {
			cur = items
		}
		props, ok := lookupD(cur, "properties")
		if !ok {
			return nil
		}
		if cur, ok = lookupD(props, seg); !ok {
			return nil
		}
	}
	for _, e := range cur {
		if e.Key != "bsonType" {
			continue
		}
		switch v := e.Value.(type) {
		case string:
			return []string{v}
		case bson.A:
			var out []string
			for _, x := range v {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

func lookupD(d bson.D, key string) (bson.D, bool) {
	for _, e := range d {
		if e.Key == key {
			v, ok := e.Value.(bson.D)
			return v, ok
		}
	}
	return nil, false
}

func isNumberType(t string) bool {
	return slices.Contains([]string{"int", "long", "double", "decimal", "number"}, t)
}

// typeAllows: a validator allowing types accepts a value of type t.
func typeAllows(types []string, t string) bool {
	return slices.Contains(types, t) || isNumberType(t) && slices.Contains(types, "number") || t == "number" && slices.ContainsFunc(types, isNumberType)
}
