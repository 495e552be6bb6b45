package migration

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Collection lifecycle in the file format (docs/file-format.md, "Collection
// lifecycle"; docs/lifecycle.md): a collection's options (capped, time
// series, clustered index, collation, change-stream pre- and post-images),
// index changes made in place (TTL, hidden) or by a declared rebuild, and
// views.

// CollectionOptions are the options a collection is created with, as
// MongoDB's create command takes them (src/mongo/db/catalog/
// collection_options.cpp). Capped, Timeseries, ClusteredIndex and
// Collation can only be given when the collection is created; a later
// migration may change a capped collection's size and max, a time-series
// collection's expireAfterSeconds and granularity (coarser only), and the
// pre- and post-images, with collMod.
type CollectionOptions struct {
	Capped     *Capped     `json:"capped,omitempty"`
	Timeseries *Timeseries `json:"timeseries,omitempty"`
	// ExpireAfterSeconds removes documents of a time-series or clustered
	// collection that many seconds after their time (the collection's
	// option, not an index's).
	ExpireAfterSeconds *int64 `json:"expireAfterSeconds,omitempty"`
	// ClusteredIndex is `clusteredIndex: true`: documents stored in _id
	// order ({key: {_id: 1}, unique: true}).
	ClusteredIndex bool `json:"clusteredIndex,omitempty"`
	// Collation is the collection's default collation document.
	Collation bson.D `json:"collation,omitempty"`
	// PrePostImages is changeStreamPreAndPostImages.enabled, nil when the
	// file does not set it.
	PrePostImages *bool `json:"changeStreamPreAndPostImages,omitempty"`
	Pos           Pos   `json:"pos"`
}

// Capped is a capped collection's limits: Size in bytes (MongoDB rounds
// it up to a multiple of 256), Max documents (0: no limit but the size).
type Capped struct {
	Size int64 `json:"size"`
	Max  int64 `json:"max,omitempty"`
	Pos  Pos   `json:"pos"`
}

// Timeseries is a time-series collection's timeseries option.
type Timeseries struct {
	TimeField   string `json:"timeField"`
	MetaField   string `json:"metaField,omitempty"`
	Granularity string `json:"granularity,omitempty"`
	Pos         Pos    `json:"pos"`
}

// Granularities are the time-series granularities, finest first: a
// collection's may only become coarser (src/mongo/db/timeseries/
// timeseries_options.cpp, isValidTimeseriesGranularityTransition).
var Granularities = []string{"seconds", "minutes", "hours"}

// CappedSize is the size MongoDB stores for a declared capped size: rounded
// up to a multiple of 256 (collection_options.cpp, adjustCappedSize).
func CappedSize(size int64) int64 { return (size + 0xff) &^ 0xff }

// IndexChange is an existing index changed in place with collMod (no
// rebuild): its TTL (expireAfterSeconds, only of an index that already
// has one) or whether it is hidden from the query planner
// (src/mongo/db/catalog/coll_mod.cpp, the index option).
type IndexChange struct {
	Name               string `json:"name"`
	ExpireAfterSeconds *int64 `json:"expireAfterSeconds,omitempty"`
	Hidden             *bool  `json:"hidden,omitempty"`
	Pos                Pos    `json:"pos"`
}

// View is a view a migration creates or changes (create with viewOn and
// pipeline; collMod of both when it exists), or drops.
type View struct {
	Name     string `json:"name"`
	ViewOn   string `json:"viewOn,omitempty"`
	Pipeline bson.A `json:"pipeline,omitempty"`
	// Drop is `drop: true`: the view is removed (a view holds no data).
	Drop bool `json:"drop,omitempty"`
	Pos  Pos  `json:"pos"`
}

// View returns the view m declares under that name, or nil.
func (m *Migration) View(name string) *View {
	for _, v := range m.Views {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Command is the option fields of a create command for o, in a fixed
// order (pkg/runner sends them; SchemaChecksum covers them).
func (o *CollectionOptions) Command() bson.D {
	var d bson.D
	if o.Capped != nil {
		d = append(d, bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: o.Capped.Size})
		if o.Capped.Max > 0 {
			d = append(d, bson.E{Key: "max", Value: o.Capped.Max})
		}
	}
	if t := o.Timeseries; t != nil {
		ts := bson.D{{Key: "timeField", Value: t.TimeField}}
		if t.MetaField != "" {
			ts = append(ts, bson.E{Key: "metaField", Value: t.MetaField})
		}
		if t.Granularity != "" {
			ts = append(ts, bson.E{Key: "granularity", Value: t.Granularity})
		}
		d = append(d, bson.E{Key: "timeseries", Value: ts})
	}
	if o.ExpireAfterSeconds != nil {
		d = append(d, bson.E{Key: "expireAfterSeconds", Value: *o.ExpireAfterSeconds})
	}
	if o.ClusteredIndex {
		d = append(d, bson.E{Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "unique", Value: true}}})
	}
	if o.Collation != nil {
		d = append(d, bson.E{Key: "collation", Value: o.Collation})
	}
	if o.PrePostImages != nil {
		d = append(d, bson.E{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: *o.PrePostImages}}})
	}
	return d
}

// OptionsBefore is the options the migrations of ms numbered below v
// declare for coll, merged in order (a later capped size replaces an
// earlier one), or nil when none does.
func OptionsBefore(ms []*Migration, coll string, v int64) *CollectionOptions {
	var out *CollectionOptions
	for _, m := range ms {
		if m.Version >= v {
			break
		}
		c := m.Collection(coll)
		if c == nil || c.Options == nil {
			continue
		}
		if out == nil {
			out = &CollectionOptions{}
		}
		mergeOptions(out, c.Options)
	}
	return out
}

func mergeOptions(out, o *CollectionOptions) {
	if o.Capped != nil {
		out.Capped = o.Capped
	}
	if o.Timeseries != nil {
		t := *o.Timeseries
		out.Timeseries = &t
	}
	if o.ExpireAfterSeconds != nil {
		out.ExpireAfterSeconds = o.ExpireAfterSeconds
	}
	out.ClusteredIndex = out.ClusteredIndex || o.ClusteredIndex
	if o.Collation != nil {
		out.Collation = o.Collation
	}
	if o.PrePostImages != nil {
		out.PrePostImages = o.PrePostImages
	}
}

// ViewBefore is the latest declaration of view name by the migrations of
// ms numbered below v, or nil (also when the latest drops it).
func ViewBefore(ms []*Migration, name string, v int64) *View {
	var out *View
	for _, m := range ms {
		if m.Version >= v {
			break
		}
		if x := m.View(name); x != nil {
			out = x
		}
	}
	if out != nil && out.Drop {
		return nil
	}
	return out
}

// IndexStateBefore is the index named name of coll as the migrations of ms
// numbered below v leave it: created, rebuilt or changed in place (its
// TTL and hidden applied), and not dropped since. ok is false when none
// declares it.
func IndexStateBefore(ms []*Migration, coll, name string, v int64) (idx Index, ok bool) {
	for _, m := range ms {
		if m.Version >= v {
			break
		}
		c := m.Collection(coll)
		if c == nil {
			continue
		}
		for _, d := range c.Indexes.Drop {
			if d.Name == name {
				ok = false
			}
		}
		for _, list := range [][]Index{c.Indexes.Create, c.Indexes.Rebuild} {
			for _, x := range list {
				if x.Name == name {
					idx, ok = x, true
				}
			}
		}
		for _, ch := range c.Indexes.Change {
			if ch.Name == name && ok {
				idx = ch.Apply(idx)
			}
		}
	}
	return idx, ok
}

// Apply returns idx with the change's TTL and hidden applied.
func (ch IndexChange) Apply(idx Index) Index {
	if ch.ExpireAfterSeconds != nil {
		idx.ExpireAfterSeconds = ch.ExpireAfterSeconds
	}
	if ch.Hidden != nil {
		idx.Hidden = *ch.Hidden
	}
	return idx
}

// lifecycleChecksum is what SchemaChecksum covers of m's collection
// options, index changes and rebuilds, and views; nil when it has none, so
// the checksum of a migration without them is what it always was.
func lifecycleChecksum(m *Migration) bson.D {
	var colls bson.A
	for _, c := range m.Collections {
		if c.Options == nil && len(c.Indexes.Change) == 0 && len(c.Indexes.Rebuild) == 0 {
			continue
		}
		d := bson.D{{Key: "name", Value: c.Name}}
		if c.Options != nil {
			d = append(d, bson.E{Key: "options", Value: c.Options.Command()})
		}
		var changes, rebuilds bson.A
		for _, ch := range c.Indexes.Change {
			changes = append(changes, ch.Spec())
		}
		for _, idx := range c.Indexes.Rebuild {
			rebuilds = append(rebuilds, idx.Spec())
		}
		colls = append(colls, append(d, bson.E{Key: "change", Value: changes}, bson.E{Key: "rebuild", Value: rebuilds}))
	}
	var views bson.A
	for _, v := range m.Views {
		views = append(views, bson.D{{Key: "name", Value: v.Name}, {Key: "viewOn", Value: v.ViewOn}, {Key: "pipeline", Value: v.Pipeline}, {Key: "drop", Value: v.Drop}})
	}
	if colls == nil && views == nil {
		return nil
	}
	return bson.D{{Key: "collections", Value: colls}, {Key: "views", Value: views}}
}

// Spec is the change as collMod's index option: {name, expireAfterSeconds,
// hidden}, with the fields the file sets.
func (ch IndexChange) Spec() bson.D {
	d := bson.D{{Key: "name", Value: ch.Name}}
	if ch.ExpireAfterSeconds != nil {
		d = append(d, bson.E{Key: "expireAfterSeconds", Value: *ch.ExpireAfterSeconds})
	}
	if ch.Hidden != nil {
		d = append(d, bson.E{Key: "hidden", Value: *ch.Hidden})
	}
	return d
}
