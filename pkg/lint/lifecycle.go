package lint

import (
	"fmt"
	"slices"

	"github.com/mongomig/mongomig/pkg/migration"
)

// lintLifecycle checks m's collection options, index changes and views
// against what the earlier files declare, refusing what MongoDB would
// refuse and what cannot change later: an option only create sets
// (capped, timeseries, clusteredIndex, collation) on a collection an
// earlier migration declares, so that the file shows it exists already
// (src/mongo/db/catalog/collection_options.cpp; coll_mod.cpp takes none of
// them), a TTL given by collMod to an index without one (coll_mod.cpp: "no
// expireAfterSeconds field to update"), a time-series granularity made
// finer (src/mongo/db/timeseries/timeseries_options.cpp).
func (r *Report) lintLifecycle(ms []*migration.Migration, m *migration.Migration) {
	for _, c := range m.Collections {
		if c.Options != nil {
			r.lintOptions(ms, m, c)
		}
		r.lintIndexChanges(ms, m, c)
	}
	for _, v := range m.Views {
		r.lintView(ms, m, v)
	}
}

func (r *Report) lifecycleProblem(sev Severity, m *migration.Migration, pos migration.Pos, coll, hint, format string, args ...any) {
	r.add(Problem{Severity: sev, File: m.File, Line: pos.Line, Column: pos.Column, Collection: coll, Message: coll + ": " + fmt.Sprintf(format, args...), Hint: hint})
}

// declaredIn is the first migration below v that declares coll, or nil.
func declaredIn(ms []*migration.Migration, coll string, v int64) *migration.Migration {
	for _, x := range ms {
		if x.Version < v && x.Collection(coll) != nil {
			return x
		}
	}
	return nil
}

func (r *Report) lintOptions(ms []*migration.Migration, m *migration.Migration, c *migration.Collection) {
	first := declaredIn(ms, c.Name, m.Version)
	if first == nil {
		return // created with its options
	}
	o, prev := c.Options, migration.OptionsBefore(ms, c.Name, m.Version)
	if prev == nil {
		prev = &migration.CollectionOptions{}
	}
	exists := fmt.Sprintf("%s declares %s, so it exists when this migration runs", first.File, c.Name)
	const copyHint = "create a new collection with the option and copy the documents (run: copyCollection), or declare it on the migration that first declares the collection before that one is applied"
	once := func(what string) {
		r.lifecycleProblem(SeverityError, m, o.Pos, c.Name, copyHint, "%s cannot be set on an existing collection: %s, and MongoDB sets %s only when it creates a collection", what, exists, what)
	}
	switch {
	case o.Capped != nil && prev.Capped == nil:
		once("capped")
	case o.Timeseries != nil && prev.Timeseries == nil:
		once("timeseries")
	case o.ClusteredIndex && !prev.ClusteredIndex:
		once("clusteredIndex")
	case o.Collation != nil && prev.Collation == nil:
		once("collation")
	case o.Collation != nil && !sameDoc(o.Collation, prev.Collation):
		r.lifecycleProblem(SeverityError, m, o.Pos, c.Name, copyHint, "a collection's default collation cannot change (MongoDB sets it only at create)")
	case o.Timeseries != nil && (o.Timeseries.TimeField != prev.Timeseries.TimeField || o.Timeseries.MetaField != prev.Timeseries.MetaField):
		r.lifecycleProblem(SeverityError, m, o.Timeseries.Pos, c.Name, copyHint, "a time-series collection's timeField and metaField cannot change (they are %q and %q)", prev.Timeseries.TimeField, prev.Timeseries.MetaField)
	case o.Timeseries != nil && o.Timeseries.Granularity != "" && finer(o.Timeseries.Granularity, prev.Timeseries.Granularity):
		r.lifecycleProblem(SeverityError, m, o.Timeseries.Pos, c.Name, "keep it, or make it coarser (seconds, minutes, hours)",
			"granularity %s is finer than %s: MongoDB only makes it coarser (src/mongo/db/timeseries/timeseries_options.cpp)", o.Timeseries.Granularity, orSeconds(prev.Timeseries.Granularity))
	}
}

func finer(g, than string) bool {
	return slices.Index(migration.Granularities, g) < slices.Index(migration.Granularities, orSeconds(than))
}

func orSeconds(g string) string {
	if g == "" {
		return "seconds"
	}
	return g
}

func sameDoc(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func (r *Report) lintIndexChanges(ms []*migration.Migration, m *migration.Migration, c *migration.Collection) {
	for _, idx := range append(slices.Clone(c.Indexes.Create), c.Indexes.Rebuild...) {
		if idx.ExpireAfterSeconds != nil && (len(idx.Keys) != 1 || idx.Keys[0].Key == "_id") {
			r.lifecycleProblem(SeverityError, m, idx.Pos, c.Name, "put the expiry on an index of one date field",
				"index %s: expireAfterSeconds needs a single-field index other than _id: MongoDB's TTL monitor expires documents through single-field indexes only", idx.Name)
		}
	}
	for _, idx := range c.Indexes.Create {
		if prev, ok := migration.IndexStateBefore(ms, c.Name, idx.Name, m.Version); ok && !sameDoc(prev.Spec(), idx.Spec()) {
			r.lifecycleProblem(SeverityError, m, idx.Pos, c.Name,
				"change expireAfterSeconds or hidden in place under indexes.change, or declare indexes.rebuild to drop and build it again with the new keys or options",
				"index %s exists with other keys or options (declared by an earlier migration); createIndexes would fail with IndexOptionsConflict", idx.Name)
		}
	}
	for _, idx := range c.Indexes.Rebuild {
		if _, ok := migration.IndexStateBefore(ms, c.Name, idx.Name, m.Version); !ok {
			r.lifecycleProblem(SeverityWarning, m, idx.Pos, c.Name, "use indexes.create for a new index",
				"index %s is rebuilt but no earlier migration creates it: up drops it if the server has it, then builds it", idx.Name)
		}
	}
	for _, ch := range c.Indexes.Change {
		prev, ok := migration.IndexStateBefore(ms, c.Name, ch.Name, m.Version)
		switch {
		case !ok:
			r.lifecycleProblem(SeverityWarning, m, ch.Pos, c.Name, "check the name (listIndexes); up refuses the change if the server has no such index",
				"index %s is changed but no earlier migration creates it", ch.Name)
		case ch.ExpireAfterSeconds != nil && prev.ExpireAfterSeconds == nil:
			r.lifecycleProblem(SeverityError, m, ch.Pos, c.Name, "declare it under indexes.rebuild with expireAfterSeconds: it is dropped and built again as a TTL index",
				"index %s is not a TTL index, and collMod cannot make it one (src/mongo/db/catalog/coll_mod.cpp: \"no expireAfterSeconds field to update\")", ch.Name)
		}
	}
}

func (r *Report) lintView(ms []*migration.Migration, m *migration.Migration, v *migration.View) {
	for _, x := range ms {
		if c := x.Collection(v.Name); c != nil {
			r.lifecycleProblem(SeverityError, m, v.Pos, v.Name, "give the view a name of its own",
				"declared as a collection in %s and as a view here: a namespace is one or the other", x.File)
			return
		}
	}
	if v.Drop && migration.ViewBefore(ms, v.Name, m.Version) == nil {
		r.lifecycleProblem(SeverityWarning, m, v.Pos, v.Name, "check the name; up skips a view the server does not have",
			"view %s is dropped but no earlier migration creates it", v.Name)
	}
}
