package lifecycle

// What `down` does with a migration's lifecycle part (docs/lifecycle.md,
// "Reverting"): each view it created is dropped, each view it changed or
// dropped gets its previous definition back; each index change in place is
// reverted in place (collMod of hidden and of a TTL's expireAfterSeconds:
// src/mongo/db/catalog/coll_mod.cpp, the index option); each declared
// rebuild is rebuilt with the earlier definition; the options it changed
// in place (a capped size and max, a time-series expiry, the pre- and
// post-images) are put back where the server can. What cannot come back
// is said, never attempted: a collection created capped, time series,
// clustered or with a collation stays so (dropping it would lose its
// documents), a granularity cannot become finer, and deleted expired
// documents are gone.

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// RevertStep is one command of down reverting a migration's lifecycle
// part: Name is create, collMod, drop, dropIndexes or createIndexes;
// Fields the fields after the command's own (create and collMod); Spec the
// index to build (createIndexes).
type RevertStep struct {
	Collection string
	Name       string
	Index      string
	Fields     bson.D
	Spec       *migration.Index
	Features   []string
}

// Revert are the steps that take m's lifecycle part back to what the
// migrations of ms below it declare, views first (the reverse of up's
// order), and what cannot come back, a sentence each. held is what the
// server holds of a collection's options (ok: it has the collection).
func Revert(ms []*migration.Migration, m *migration.Migration, held func(coll string) (Held, bool)) (steps []RevertStep, lost []string) {
	for i := len(m.Views) - 1; i >= 0; i-- {
		if st, ok := revertView(ms, m, m.Views[i]); ok {
			steps = append(steps, st)
		}
	}
	for _, c := range m.Collections {
		s, l := revertIndexes(ms, m, c)
		steps, lost = append(steps, s...), append(lost, l...)
		if c.Options != nil {
			h, ok := held(c.Name)
			s, l := revertOptions(ms, m, c, h, ok)
			steps, lost = append(steps, s...), append(lost, l...)
		}
		lost = append(lost, expired(m, c)...)
	}
	return steps, lost
}

// revertView drops the view m created, puts back the definition of one
// it changed or dropped; ok is false when m dropped a view no file
// created (nothing to put back).
func revertView(ms []*migration.Migration, m *migration.Migration, v *migration.View) (RevertStep, bool) {
	prev := migration.ViewBefore(ms, v.Name, m.Version)
	switch {
	case prev == nil && v.Drop:
		return RevertStep{}, false
	case prev == nil:
		return RevertStep{Collection: v.Name, Name: "drop", Features: []string{probe.FeatureViews}}, true
	case v.Drop:
		return RevertStep{Collection: v.Name, Name: "create", Fields: viewFields(prev), Features: []string{probe.FeatureViews}}, true
	}
	return RevertStep{Collection: v.Name, Name: "collMod", Fields: viewFields(prev), Features: []string{probe.FeatureViewsModify}}, true
}

func viewFields(v *migration.View) bson.D {
	p := v.Pipeline
	if p == nil {
		p = bson.A{}
	}
	return bson.D{{Key: "viewOn", Value: v.ViewOn}, {Key: "pipeline", Value: p}}
}

func revertIndexes(ms []*migration.Migration, m *migration.Migration, c *migration.Collection) (steps []RevertStep, lost []string) {
	for _, idx := range c.Indexes.Rebuild {
		prev, ok := migration.IndexStateBefore(ms, c.Name, idx.Name, m.Version)
		if !ok {
			lost = append(lost, fmt.Sprintf("%s: %s: index %s stays as %04d rebuilt it: no earlier migration declares it, so its previous definition is unknown", m.File, c.Name, idx.Name, m.Version))
			continue
		}
		steps = append(steps, RevertStep{Collection: c.Name, Name: "dropIndexes", Index: idx.Name},
			RevertStep{Collection: c.Name, Name: "createIndexes", Index: idx.Name, Spec: &prev, Features: indexFeatures(prev)})
	}
	for _, ch := range c.Indexes.Change {
		prev, ok := migration.IndexStateBefore(ms, c.Name, ch.Name, m.Version)
		if !ok {
			lost = append(lost, fmt.Sprintf("%s: %s: index %s keeps %04d's change: no earlier migration declares it, so its previous state is unknown", m.File, c.Name, ch.Name, m.Version))
			continue
		}
		back := migration.IndexChange{Name: ch.Name}
		if ch.ExpireAfterSeconds != nil && prev.ExpireAfterSeconds != nil {
			back.ExpireAfterSeconds = prev.ExpireAfterSeconds
		}
		if ch.Hidden != nil {
			h := prev.Hidden
			back.Hidden = &h
		}
		if back.ExpireAfterSeconds == nil && back.Hidden == nil {
			continue
		}
		features, _ := IndexChange(c.Name, back, true, prev.ExpireAfterSeconds)
		steps = append(steps, RevertStep{Collection: c.Name, Name: "collMod", Index: ch.Name, Fields: bson.D{{Key: "index", Value: back.Spec()}}, Features: features})
	}
	return steps, lost
}

func indexFeatures(idx migration.Index) []string {
	var f []string
	if idx.ExpireAfterSeconds != nil {
		f = append(f, probe.FeatureTTL)
	}
	if idx.Hidden {
		f = append(f, probe.FeatureHidden)
	}
	return f
}

// revertOptions puts back the options m changed in place, to what the
// earlier migrations declare (or MongoDB's default where none did), and
// says which of m's options cannot come back.
func revertOptions(ms []*migration.Migration, m *migration.Migration, c *migration.Collection, held Held, onServer bool) (steps []RevertStep, lost []string) {
	o := c.Options
	prev := migration.OptionsBefore(ms, c.Name, m.Version)
	if prev == nil {
		prev = &migration.CollectionOptions{}
	}
	for _, what := range createdOnly(o, prev) {
		lost = append(lost, fmt.Sprintf("%s: %s stays %s: MongoDB sets that only when it creates a collection, and down does not drop %s (its documents would go with it)", m.File, c.Name, what, c.Name))
	}
	if !onServer {
		return steps, lost
	}
	target := &migration.CollectionOptions{}
	if o.Capped != nil && prev.Capped != nil {
		target.Capped = prev.Capped
	}
	if o.Timeseries != nil && o.Timeseries.Granularity != "" && prev.Timeseries != nil {
		target.Timeseries = &migration.Timeseries{TimeField: prev.Timeseries.TimeField, MetaField: prev.Timeseries.MetaField, Granularity: defaultGranularity(prev.Timeseries.Granularity)}
	}
	if o.PrePostImages != nil {
		v := prev.PrePostImages != nil && *prev.PrePostImages
		target.PrePostImages = &v
	}
	if o.ExpireAfterSeconds != nil && prev.ExpireAfterSeconds != nil {
		target.ExpireAfterSeconds = prev.ExpireAfterSeconds
	}
	for _, ch := range OptionChanges(target, held) {
		if ch.Refused != "" {
			lost = append(lost, fmt.Sprintf("%s: %s: %s stays: %s", m.File, c.Name, BSONText(ch.Fields), ch.Refused))
			continue
		}
		steps = append(steps, RevertStep{Collection: c.Name, Name: "collMod", Fields: ch.Fields, Features: ch.Features})
	}
	if o.ExpireAfterSeconds != nil && prev.ExpireAfterSeconds == nil && held.Expire != nil {
		steps = append(steps, RevertStep{Collection: c.Name, Name: "collMod", Fields: bson.D{{Key: "expireAfterSeconds", Value: "off"}}, Features: []string{probe.FeatureTimeseriesModify}})
	}
	return steps, lost
}

// createdOnly names the options o declares that an earlier migration did
// not: MongoDB sets them only at create, so down cannot undo them.
func createdOnly(o, prev *migration.CollectionOptions) []string {
	var out []string
	if o.Capped != nil && prev.Capped == nil {
		out = append(out, "capped")
	}
	if o.Timeseries != nil && prev.Timeseries == nil {
		out = append(out, "a time-series collection")
	}
	if o.ClusteredIndex && !prev.ClusteredIndex {
		out = append(out, "clustered")
	}
	if o.Collation != nil && prev.Collation == nil {
		out = append(out, "with its default collation")
	}
	return out
}

// expired says that the documents m's TTL indexes (a new one, or a
// lowered expireAfterSeconds) deleted, through up's backlog deletion or
// the server's TTL monitor since, do not come back.
func expired(m *migration.Migration, c *migration.Collection) []string {
	var out []string
	for _, idx := range c.Indexes.Create {
		if idx.ExpireAfterSeconds != nil {
			out = append(out, fmt.Sprintf("%s: %s: the documents deleted as expired by %s (up's backlog deletion, and the TTL monitor since) do not come back", m.File, c.Name, idx.Name))
		}
	}
	for _, ch := range c.Indexes.Change {
		if ch.ExpireAfterSeconds != nil {
			out = append(out, fmt.Sprintf("%s: %s: the documents deleted as expired under %s's expireAfterSeconds %d do not come back", m.File, c.Name, ch.Name, *ch.ExpireAfterSeconds))
		}
	}
	return out
}
