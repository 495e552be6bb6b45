package runner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// heldOpts are a collection's lifecycle options as the server holds them
// (listCollections), or, for a collection an earlier pending migration of
// the same run creates, as the files declare them.
type heldOpts struct {
	capped    bool
	size, max int64
	ts        *migration.Timeseries
	expire    *int64
	clustered bool
	collation bson.D
	prePost   bool
}

// heldOptions reads coll's options; onServer is false when the server
// does not have coll yet (an earlier pending migration creates it).
func (pl *lifecyclePlan) heldOptions(coll string) (h heldOpts, onServer bool) {
	s, ok := pl.srv[coll]
	if !ok {
		if o := migration.OptionsBefore(pl.r.migrations, coll, pl.m.Version); o != nil {
			h = heldOpts{clustered: o.ClusteredIndex, collation: o.Collation, expire: o.ExpireAfterSeconds, ts: o.Timeseries}
			if o.Capped != nil {
				h.capped, h.size, h.max = true, migration.CappedSize(o.Capped.Size), o.Capped.Max
			}
			h.prePost = o.PrePostImages != nil && *o.PrePostImages
		}
		return h, false
	}
	var raw struct {
		Capped     bool `bson:"capped"`
		Timeseries *struct {
			TimeField   string `bson:"timeField"`
			MetaField   string `bson:"metaField"`
			Granularity string `bson:"granularity"`
		} `bson:"timeseries"`
		ClusteredIndex bson.Raw `bson:"clusteredIndex"`
		Collation      bson.D   `bson:"collation"`
		PrePost        struct {
			Enabled bool `bson:"enabled"`
		} `bson:"changeStreamPreAndPostImages"`
	}
	_ = bson.Unmarshal(s.Options, &raw)
	h = heldOpts{capped: raw.Capped, clustered: raw.ClusteredIndex != nil, collation: raw.Collation, prePost: raw.PrePost.Enabled}
	h.size, _ = rawInt(s.Options, "size")
	h.max, _ = rawInt(s.Options, "max")
	if n, ok := rawInt(s.Options, "expireAfterSeconds"); ok {
		h.expire = &n
	}
	if t := raw.Timeseries; t != nil {
		h.ts = &migration.Timeseries{TimeField: t.TimeField, MetaField: t.MetaField, Granularity: t.Granularity}
	}
	if h.max == 0x7fffffff {
		h.max = 0 // MongoDB stores "no max" as 2^31-1 (collection_options.cpp, adjustCappedMaxDocs)
	}
	return h, true
}

// rawInt reads a number (int32, int64 or double) at key of doc.
func rawInt(doc bson.Raw, key string) (int64, bool) {
	v, err := doc.LookupErr(key)
	if err != nil {
		return 0, false
	}
	if n, ok := v.AsInt64OK(); ok {
		return n, true
	}
	if f, ok := v.DoubleOK(); ok {
		return int64(f), true
	}
	return 0, false
}
