package lint

import (
	"errors"
	"fmt"
	"time"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
)

// lintBuckets checks the time-bucketed families across files: a later
// declaration keeps the first one's period; no collection declared under
// collections is a member of a family (the family owns its members); no
// member of one family is a member of another; each family's validator
// is MongoDB's $jsonSchema dialect.
func (r *Report) lintBuckets(ms []*migration.Migration) {
	first := map[string]*migration.BucketFamily{}
	firstFile := map[string]string{}
	for _, m := range ms {
		for _, b := range m.Buckets {
			r.lintFamilyValidator(m, b)
			f, err := b.Family()
			if err != nil {
				continue // the parser's error
			}
			if prev, ok := first[b.Pattern]; ok {
				pf, _ := prev.Family()
				if b.Period != "" && f.Period != pf.Period {
					r.add(Problem{Severity: SeverityError, File: m.File, Line: b.Pos.Line, Column: b.Pos.Column, Collection: b.Pattern,
						Message: fmt.Sprintf("bucket family %q is a %s family (%s); this file says %s", b.Pattern, pf.Period, migration.DisplayName(firstFile[b.Pattern]), f.Period),
						Hint:    "a family's period cannot change: declare a new family (another pattern) and drop the old one's members with run: dropCollection"})
				}
				continue
			}
			first[b.Pattern], firstFile[b.Pattern] = b, m.File
		}
	}
	for pattern, b := range first {
		f, _ := b.Family()
		sample := f.Name(f.Start(sampleTime))
		for other, ob := range first {
			if other == pattern {
				continue
			}
			of, _ := ob.Family()
			if _, err := of.Parse(sample); err == nil {
				r.add(Problem{Severity: SeverityError, File: firstFile[pattern], Line: b.Pos.Line, Column: b.Pos.Column, Collection: pattern,
					Message: fmt.Sprintf("bucket families %q and %q both name %s", pattern, other, sample),
					Hint:    "give each family a pattern of its own (a different prefix)"})
			}
		}
		for _, m := range ms {
			for _, c := range m.Collections {
				if _, err := f.Parse(c.Name); err == nil {
					r.add(Problem{Severity: SeverityError, File: m.File, Line: c.Pos.Line, Column: c.Pos.Column, Collection: c.Name,
						Message: fmt.Sprintf("collection %q is a member of bucket family %q (%s)", c.Name, pattern, migration.DisplayName(firstFile[pattern])),
						Hint:    "declare the validator and indexes under buckets: for every member, or rename the collection"})
				}
			}
		}
	}
}

// lintFamilyValidator checks a family's validator against MongoDB's
// $jsonSchema dialect, as lintMigration does a collection's.
func (r *Report) lintFamilyValidator(m *migration.Migration, b *migration.BucketFamily) {
	if b.Validator == nil {
		return
	}
	c := &migration.Collection{Name: b.Pattern, Validator: b.Validator}
	schema, ok := c.JSONSchema()
	if !ok {
		return
	}
	_, err := validator.Compile(schema)
	var serrs validator.SchemaErrors
	if !errors.As(err, &serrs) {
		return
	}
	base := "/buckets/" + escapePointer(b.Pattern) + "/validator/$jsonSchema"
	for _, se := range serrs {
		pos := m.Position(base + se.Path)
		path := se.Path
		if path == "" {
			path = "/"
		}
		r.add(Problem{Severity: SeverityError, File: m.File, Line: pos.Line, Column: pos.Column, Collection: b.Pattern,
			Message: fmt.Sprintf("validator %s: %s", path, se.Msg)})
	}
}

// sampleTime is the time whose member names check two families apart.
var sampleTime = time.Date(2025, time.July, 9, 0, 0, 0, 0, time.UTC)
