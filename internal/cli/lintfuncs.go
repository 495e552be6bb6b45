package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// requireFuncsFlag makes lint fail on a func step the binary lacks.
const requireFuncsFlag = "require-funcs"

// uncheckedFuncs adds to r a problem at each func step, of an upgrade or
// a downgrade, whose Go function opts do not register: lint could run
// neither the step nor the examples through it, so what it says of that
// file is not the whole story. A warning, or with require an error. It
// returns the functions missing, sorted.
func uncheckedFuncs(r *lint.Report, ms []*migration.Migration, require bool, opts []version.Option) []string {
	var missing []string
	for _, m := range ms {
		if m.Broken {
			continue
		}
		for _, c := range m.Collections {
			for _, s := range append(append([]migration.Step(nil), c.Upgrade...), c.Downgrade...) {
				if s.Op != migration.OpFunc || version.Registered(s.Func, opts...) {
					continue
				}
				if !slices.Contains(missing, s.Func) {
					missing = append(missing, s.Func)
				}
				p := lint.Problem{Severity: lint.SeverityWarning, File: m.File, Line: s.Pos.Line, Column: s.Pos.Column, Collection: c.Name,
					Message: fmt.Sprintf("func step not checked: this mongomig binary does not have the Go function %q, so lint ran neither the step nor the examples through it", s.Func),
					Hint:    "lint with your team's binary, which registers it (go build -o ./bin/mongomig ./cmd/yourbinary, then ./bin/mongomig lint; see docs/deploying.md); --require-funcs makes this an error"}
				if require {
					p.Severity = lint.SeverityError
					p.Hint = "run lint with your team's binary, which registers it (go build -o ./bin/mongomig ./cmd/yourbinary, then ./bin/mongomig lint --require-funcs; see docs/deploying.md)"
					r.Errors++
				} else {
					r.Warnings++
				}
				r.Problems = append(r.Problems, p)
			}
		}
	}
	slices.SortStableFunc(r.Problems, func(a, b lint.Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	slices.Sort(missing)
	return missing
}

// uncheckedNote is the line lint ends with when a func step was not
// checked: which binary checks it.
func uncheckedNote(o *output, missing []string, require bool) {
	if len(missing) == 0 || o.json {
		return
	}
	what := fmt.Sprintf("%s not in this binary (%s)", count(len(missing), "func"), strings.Join(missing, ", "))
	if require {
		o.printf("%s %s: lint fails (--require-funcs); run it with your team's binary, which registers them (docs/deploying.md)\n", o.red("not checked:"), what)
		return
	}
	o.printf("%s %s: lint could not check their steps and examples; run it with your team's binary, which registers them, or pass --require-funcs to fail here (docs/deploying.md)\n",
		o.yellow("not checked:"), what)
}
