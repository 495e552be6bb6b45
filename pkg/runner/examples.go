package runner

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// lintExamples checks each example: the migration's upgrade of before
// must equal after (field order aside; the version field is ignored).
// Examples whose upgrade needs a Go function this binary does not register
// are reported as warnings, not checked.
func (r *LintReport) lintExamples(ms []*migration.Migration, opts []version.Option) {
	var good []*migration.Migration
	for _, m := range ms {
		if !m.Broken {
			good = append(good, m)
		}
	}
	reg, err := version.FromMigrations(good, append([]version.Option{version.AllowMissingFuncs(true)}, opts...)...)
	if err != nil {
		r.add(Problem{Severity: SeverityError, File: ".", Message: "examples not checked: " + err.Error()})
		return
	}
	for _, m := range good {
		for _, c := range m.Collections {
			for i, ex := range c.Examples {
				r.lintExample(reg, m, c, i, ex)
			}
		}
	}
}

func (r *LintReport) lintExample(reg *version.Registry, m *migration.Migration, c *migration.Collection, i int, ex migration.Example) {
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
	if len(diffs) == 0 {
		return
	}
	p.Message = fmt.Sprintf("example %d: upgrade(before) differs from after:\n      %s", i+1, strings.Join(diffs, "\n      "))
	p.Hint = "fix the example's after, or the upgrade steps; got " + extJSON(got)
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
			out = append(out, fmt.Sprintf("- %s: %s (expected, missing)", path, extJSON(w)))
		case !inWant:
			out = append(out, fmt.Sprintf("+ %s: %s (unexpected)", path, extJSON(g)))
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
	return []string{fmt.Sprintf("~ %s: got %s, expected %s", path, extJSON(g), extJSON(w))}
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
