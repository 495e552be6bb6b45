package lint

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
	"github.com/mongomig/mongomig/pkg/version"
)

// lintExamples checks each example: the migration's upgrade of before
// must equal after (field order aside; the version field is ignored).
// Examples whose upgrade needs a Go function this binary does not register
// are reported as warnings, not checked.
func (r *Report) lintExamples(ms []*migration.Migration, opts []version.Option) {
	var good []*migration.Migration
	for _, m := range ms {
		if !m.Broken {
			good = append(good, m)
		}
	}
	reg, err := version.FromMigrations(withoutBadValidators(good), append([]version.Option{version.AllowMissingFuncs(true)}, opts...)...)
	if err != nil {
		r.add(Problem{Severity: SeverityError, File: ".", Message: "examples not checked: " + err.Error()})
		return
	}
	for _, m := range good {
		for _, c := range m.Collections {
			r.lintClosedSchema(reg, m, c)
			for i, ex := range c.Examples {
				r.lintExample(reg, good, m, c, i, ex)
			}
		}
	}
}

// withoutBadValidators returns ms with the validators that do not compile
// removed (shallow copies; the originals are untouched), so the examples
// of a file with a schema error are still checked. The schema errors
// themselves are reported by lintMigration.
func withoutBadValidators(ms []*migration.Migration) []*migration.Migration {
	out := make([]*migration.Migration, len(ms))
	for i, m := range ms {
		out[i] = m
		for j, c := range m.Collections {
			if c.Validator == nil || compileValidator(c) == nil {
				continue
			}
			if out[i] == m {
				cp := *m
				cp.Collections = append([]*migration.Collection(nil), m.Collections...)
				out[i] = &cp
			}
			cc := *c
			cc.Validator = nil
			out[i].Collections[j] = &cc
		}
	}
	return out
}

// lintClosedSchema warns about a root schema with additionalProperties:
// false that does not list _id (MongoDB then refuses every insert) or the
// version field (every document mongomig stamps).
func (r *Report) lintClosedSchema(reg *version.Registry, m *migration.Migration, c *migration.Collection) {
	schema, ok := c.JSONSchema()
	if !ok {
		return
	}
	closed, listed := false, map[string]bool{}
	for _, e := range schema {
		switch e.Key {
		case "additionalProperties":
			closed = e.Value == false
		case "properties":
			if props, ok := e.Value.(bson.D); ok {
				for _, p := range props {
					listed[p.Key] = true
				}
			}
		}
	}
	if !closed {
		return
	}
	for _, f := range []struct{ name, why string }{
		{"_id", "MongoDB refuses every document, since each has an _id"},
		{reg.Field(), "documents carrying the version field are refused"},
	} {
		if !listed[f.name] {
			pos := m.Position("/collections/" + escapePointer(c.Name) + "/validator/$jsonSchema/additionalProperties")
			r.add(Problem{Severity: SeverityWarning, File: m.File, Line: pos.Line, Column: pos.Column, Collection: c.Name,
				Message: fmt.Sprintf("the validator has additionalProperties: false but does not list %q under properties: %s", f.name, f.why),
				Hint:    fmt.Sprintf("add `%s: {}` (or a schema for it) to properties", f.name)})
		}
	}
}

func (r *Report) lintExample(reg *version.Registry, ms []*migration.Migration, m *migration.Migration, c *migration.Collection, i int, ex migration.Example) {
	p := Problem{Severity: SeverityError, File: m.File, Line: ex.Pos.Line, Column: ex.Pos.Column, Collection: c.Name}
	got := ex.Before
	if len(c.Upgrade) > 0 {
		var err error
		got, err = reg.ApplyOne(c.Name, m.Version, ex.Before)
		if errors.Is(err, version.ErrFuncNotRegistered) {
			p.Severity, p.Message = SeverityWarning, fmt.Sprintf("example %d not checked: %v", i+1, err)
			r.add(p)
			return
		}
		if err != nil {
			p.Message, p.Hint = fmt.Sprintf("example %d: the upgrade fails on before: %v", i+1, err), "fix the upgrade steps or the example"
			r.add(p)
			return
		}
	}
	diffs := diffDocs("", withoutField(got, reg.Field()), withoutField(ex.After, reg.Field()))
	if len(diffs) > 0 {
		p.Message = fmt.Sprintf("example %d: upgrade(before) differs from after:\n      %s", i+1, strings.Join(firstLines(diffs), "\n      "))
		p.Hint = "fix the example's after, or the upgrade steps; got " + cut(extJSON(got))
		r.add(p)
		return
	}
	r.lintExampleValid(reg, ms, m, c, i, ex, p)
}

// lintExampleValid checks that after, stamped with this migration's
// version as a real document would be, satisfies the validator in force
// at this migration.
func (r *Report) lintExampleValid(reg *version.Registry, ms []*migration.Migration, m *migration.Migration, c *migration.Collection, i int, ex migration.Example, p Problem) {
	state := migration.StateBefore(ms, c.Name, m.Version+1)
	schemaDoc, ok := (&migration.Collection{Validator: state.Validator}).JSONSchema()
	if !ok {
		return
	}
	schema, err := validator.Compile(schemaDoc)
	if err != nil {
		return // reported by the schema check
	}
	doc := withoutField(ex.After, reg.Field())
	if len(c.Upgrade) > 0 || state.From == m.Version {
		doc = append(doc, bson.E{Key: reg.Field(), Value: m.Version})
	}
	fs := schema.ValidateD(doc)
	if len(fs) == 0 {
		return
	}
	lines := make([]string, len(fs))
	for j, f := range fs {
		lines[j] = failureLine(f)
	}
	p.Message = fmt.Sprintf("example %d: after fails the validator of migration %d:\n      %s", i+1, state.From, strings.Join(firstLines(lines), "\n      "))
	p.Hint = "fix the example or the schema (documents carry the version field: a schema with additionalProperties: false must list it)"
	r.add(p)
}

func withoutField(d bson.D, field string) bson.D {
	out := make(bson.D, 0, len(d))
	for _, e := range d {
		if e.Key != field {
			out = append(out, e)
		}
	}
	return out
}

func extJSON(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	return strings.TrimSuffix(strings.TrimPrefix(s, `{"v":`), "}")
}

// diffDocs lists the differences between got and want, by path: fields
// missing, unexpected or different. Field order is ignored; types are not.
func diffDocs(prefix string, got, want bson.D) []string {
	var out []string
	gm, wm := map[string]any{}, map[string]any{}
	for _, e := range got {
		gm[e.Key] = e.Value
	}
	for _, e := range want {
		wm[e.Key] = e.Value
	}
	keys := map[string]bool{}
	for k := range gm {
		keys[k] = true
	}
	for k := range wm {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		path := prefix + k
		g, inGot := gm[k]
		w, inWant := wm[k]
		switch {
		case !inGot:
			out = append(out, fmt.Sprintf("- %s: %s (expected, missing)", cut(path), cut(extJSON(w))))
		case !inWant:
			out = append(out, fmt.Sprintf("+ %s: %s (unexpected)", cut(path), cut(extJSON(g))))
		default:
			out = append(out, diffValues(path, g, w)...)
		}
	}
	return out
}

func diffValues(path string, g, w any) []string {
	gd, gIsDoc := g.(bson.D)
	wd, wIsDoc := w.(bson.D)
	if gIsDoc && wIsDoc {
		return diffDocs(path+".", gd, wd)
	}
	if extJSONCanonical(g) == extJSONCanonical(w) {
		return nil
	}
	return []string{fmt.Sprintf("~ %s: got %s, expected %s", cut(path), cut(extJSON(g)), cut(extJSON(w)))}
}

// extJSONCanonical renders a value with its exact BSON type, so 1 (int)
// and 1.0 (double) differ, as they do to a validator.
func extJSONCanonical(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
