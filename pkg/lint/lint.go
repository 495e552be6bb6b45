package lint

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
	"github.com/mongomig/mongomig/pkg/version"
)

// Severity of a lint [Problem].
type Severity string

// Severities. Only errors make a directory invalid.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of [Lint].
type Problem struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Column   int      `json:"column,omitempty"`
	// Collection is set when the problem concerns one collection.
	Collection string `json:"collection,omitempty"`
	Message    string `json:"message"`
	Hint       string `json:"hint,omitempty"`
}

// Location renders "file:line:column", or "file" when the line is unknown
// (the name quoted when it holds control characters: migration.DisplayName).
func (p Problem) Location() string {
	if p.Line == 0 {
		return migration.DisplayName(p.File)
	}
	return fmt.Sprintf("%s:%d:%d", migration.DisplayName(p.File), p.Line, p.Column)
}

// Report is the result of [Lint].
type Report struct {
	// Migrations lists the files that parsed, in version order.
	Migrations []File    `json:"migrations"`
	Problems   []Problem `json:"problems"`
	Errors     int       `json:"errors"`
	Warnings   int       `json:"warnings"`
}

// File identifies one migration that parsed.
type File struct {
	Version  int64  `json:"version"`
	Name     string `json:"name"`
	File     string `json:"file"`
	Checksum string `json:"checksum"`
}

// OK reports whether the directory has no errors (warnings allowed).
func (r *Report) OK() bool { return r.Errors == 0 }

// Lint checks every migration in fsys without a database: the file format
// (package migration), the numbering, and every validator against MongoDB's
// $jsonSchema dialect (package validator). It returns an error only when
// the directory itself cannot be read; problems in files are in the report.
//
// opts configure the version registry the examples run with: register the
// application's Go functions (version.WithFunc) so examples of func steps
// are checked rather than skipped with a warning.
func Lint(fsys fs.FS, opts ...version.Option) (*Report, error) {
	r, _, err := Load(fsys, opts...)
	return r, err
}

// Load is [Lint] that also returns the migrations it loaded, in version
// order and as [migration.Load] returns them (files that did not parse
// included, marked Broken), so a caller that goes on to use them, such as
// runner.New, parses the directory once.
func Load(fsys fs.FS, opts ...version.Option) (*Report, []*migration.Migration, error) {
	ms, err := migration.Load(fsys)
	r := &Report{Migrations: []File{}, Problems: []Problem{}}
	var perr migration.ErrorList
	switch {
	case errors.As(err, &perr):
		for _, e := range perr {
			r.add(Problem{Severity: SeverityError, File: e.File, Line: e.Pos.Line, Column: e.Pos.Column, Message: e.Msg, Hint: e.Hint})
		}
	case err != nil:
		return nil, nil, err
	}
	if len(ms) == 0 && len(perr) == 0 {
		r.add(Problem{Severity: SeverityWarning, File: ".", Message: "no migration files found",
			Hint: HintNoFiles})
	}
	for _, m := range ms {
		if !m.Broken {
			r.Migrations = append(r.Migrations, File{Version: m.Version, Name: m.Name, File: m.File, Checksum: m.Checksum})
		}
		// Broken files are checked too, as far as they could be read, so
		// one run shows every problem.
		r.lintMigration(m)
		r.lintUniqueIndexes(ms, m)
		r.lintDiscards(ms, m, SeverityWarning)
		r.lintLifecycle(ms, m)
	}
	r.lintCollectionNames(ms)
	r.lintIntegrity(ms)
	r.lintBuckets(ms)
	r.lintConstraintAction(ms)
	// Steps that touch the version field or the step marker: the field's
	// name is the registry's (version.WithField), so pkg/version checks.
	// Examples cannot run on such a chain (the registry refuses it).
	var reserved migration.ErrorList
	if errors.As(version.CheckReservedFields(ms, opts...), &reserved) {
		for _, e := range reserved {
			r.add(Problem{Severity: SeverityError, File: e.File, Line: e.Pos.Line, Column: e.Pos.Column, Message: e.Msg, Hint: e.Hint})
		}
	} else {
		r.lintExamples(ms, opts)
	}
	slices.SortStableFunc(r.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return r, ms, nil
}

// templateDescription begins the description `mongomig create` writes.
const templateDescription = "TODO say what this migration changes"

// emptyMigration is the problem of a migration that declares no
// collection, as `mongomig create` writes it: applied, it would change
// nothing and be recorded as it is, and filling it in afterwards would be
// drift. Up and Plan refuse it (an error: [Pending]) while it is pending;
// lint, which cannot tell a pending file from one an earlier mongomig
// already applied (whose file can no longer change), reports it as a
// warning, and runner.New lets it through, so that status, down and
// backfill work while it is being written.
func emptyMigration(m *migration.Migration, sev Severity) Problem {
	pos := m.Position("/collections")
	return Problem{Severity: sev, File: m.File, Line: pos.Line, Column: pos.Column,
		Message: "migration declares no collection",
		Hint:    HintNoCollections}
}

// Pending checks migrations about to be applied for what refuses them
// although [Lint] only warns: a migration that declares no collection is
// an error here. Up and Plan call it on the pending migrations before
// anything is applied.
func Pending(ms []*migration.Migration) *Report {
	r := &Report{Problems: []Problem{}}
	for _, m := range ms {
		if len(m.Collections) == 0 && len(m.Run) == 0 && len(m.Views) == 0 && len(m.Buckets) == 0 {
			r.add(emptyMigration(m, SeverityError))
		}
	}
	return r
}

func (r *Report) add(p Problem) {
	r.Problems = append(r.Problems, p)
	if p.Severity == SeverityError {
		r.Errors++
	} else {
		r.Warnings++
	}
}

func (r *Report) lintMigration(m *migration.Migration) {
	if len(m.Collections) == 0 && len(m.Run) == 0 && len(m.Views) == 0 && len(m.Buckets) == 0 && !m.Broken {
		r.add(emptyMigration(m, SeverityWarning))
	}
	r.lintRun(m)
	if strings.HasPrefix(m.Description, templateDescription) {
		pos := m.Position("/description")
		r.add(Problem{Severity: SeverityWarning, File: m.File, Line: pos.Line, Column: pos.Column,
			Message: "description is still the template's placeholder",
			Hint:    "say what this migration changes and why (the description may be edited after the migration is applied: it is not drift)"})
	}
	for _, c := range m.Collections {
		if c.Validator == nil {
			continue
		}
		if err := compileValidator(c); err != nil {
			var serrs validator.SchemaErrors
			if !errors.As(err, &serrs) {
				r.add(Problem{Severity: SeverityError, File: m.File, Line: c.Pos.Line, Column: c.Pos.Column, Collection: c.Name, Message: err.Error()})
				continue
			}
			base := "/collections/" + escapePointer(c.Name) + "/validator/$jsonSchema"
			for _, se := range serrs {
				pos := m.Position(base + se.Path)
				path := se.Path
				if path == "" {
					path = "/"
				}
				r.add(Problem{Severity: SeverityError, File: m.File, Line: pos.Line, Column: pos.Column, Collection: c.Name,
					Message: fmt.Sprintf("validator %s: %s", path, se.Msg)})
			}
		}
	}
}

// Hints that the tool's command line words with its commands (the CLI
// renders them so; see [migration.HintFromTemplate]).
const (
	HintNoFiles       = "migration files are named NNNN_snake_name.yaml; the create command writes the first"
	HintNoCollections = "fill in collections (as the create command's template shows; docs/file-format.md) or delete the file; up applies nothing while a pending migration declares nothing"
)
