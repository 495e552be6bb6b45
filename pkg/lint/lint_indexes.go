package lint

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// lintUniqueIndexes warns about unique indexes that MongoDB may fail to
// build: it indexes a missing field as null, so a unique index without
// sparse or partialFilterExpression admits only one document without the
// field, and the build fails with E11000 when several exist. That happens
// when the field is created or moved by the same migration's upgrade
// (documents are upgraded lazily, so most are still at the previous
// version when the index is built) or when the validator does not require
// it. (The sandbox accepts such duplicates; MongoDB does not.)
//
// The validator is the one in force after m, built from every file up to
// m: when one of them did not parse, it is unknown, and only the reason
// that does not depend on it (m's own upgrade) is given; the parse error
// is reported anyway.
func (r *Report) lintUniqueIndexes(ms []*migration.Migration, m *migration.Migration) {
	schemaKnown := true
	for _, x := range ms {
		if x.Broken && x.Version <= m.Version {
			schemaKnown = false
		}
	}
	for _, c := range m.Collections {
		schema := migration.StateBefore(ms, c.Name, m.Version+1).Validator
		for _, idx := range c.Indexes.Create {
			if !idx.Unique || idx.Sparse || idx.PartialFilterExpression != nil {
				continue
			}
			for _, k := range idx.Keys {
				why := ""
				switch {
				case upgradeWrites(c.Upgrade, k.Key):
					why = fmt.Sprintf("this migration's upgrade creates %s, but documents are upgraded lazily: when the index is built, most still lack it", k.Key)
				case schemaKnown && !requiresPath(schema, k.Key):
					why = fmt.Sprintf("the validator does not require %s", k.Key)
				default:
					continue
				}
				r.add(Problem{Severity: SeverityWarning, File: m.File, Line: idx.Pos.Line, Column: idx.Pos.Column, Collection: c.Name,
					Message: fmt.Sprintf("unique index %s: %s; MongoDB indexes a missing field as null, so a second document without it fails the build (E11000)", idx.Name, why),
					Hint:    fmt.Sprintf("add sparse: true, or partialFilterExpression: {%s: {$exists: true}}", k.Key)})
				break
			}
		}
	}
}

// upgradeWrites reports whether a step of the upgrade sets, defaults,
// renames or copies into path (or a parent or child of it).
func upgradeWrites(steps []migration.Step, path string) bool {
	for _, s := range steps {
		for _, f := range s.Fields {
			target := f.Path
			if s.Op == migration.OpRename || s.Op == migration.OpCopy {
				target = f.To
			}
			if s.Op == migration.OpUnset {
				continue
			}
			if target == path || strings.HasPrefix(path, target+".") || strings.HasPrefix(target, path+".") {
				return true
			}
		}
	}
	return false
}

// requiresPath reports whether a {$jsonSchema: ...} validator requires
// every component of the dotted path.
func requiresPath(validator bson.D, path string) bool {
	s, ok := bsonx.LookupD(validator, "$jsonSchema")
	if !ok {
		return false
	}
	for _, part := range strings.Split(path, ".") {
		r, _ := bsonx.Lookup(s, "required")
		req, _ := r.(bson.A)
		found := false
		for _, v := range req {
			found = found || v == part
		}
		if !found {
			return false
		}
		props, _ := bsonx.LookupD(s, "properties")
		if s, ok = bsonx.LookupD(props, part); !ok {
			s = nil
		}
	}
	return true
}
