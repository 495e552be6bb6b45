package lifecycle

import (
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Held are a collection's lifecycle options as the server holds them
// (listCollections), or, for a collection an earlier pending migration of
// the same run creates, as the files declare them.
type Held struct {
	Capped    bool
	Size, Max int64
	TS        *migration.Timeseries
	Expire    *int64
	Clustered bool
	Collation bson.D
	PrePost   bool
}

// HeldInFiles are the options o (what the files declared last) leaves.
func HeldInFiles(o *migration.CollectionOptions) Held {
	h := Held{Clustered: o.ClusteredIndex, Collation: o.Collation, Expire: o.ExpireAfterSeconds, TS: o.Timeseries}
	if o.Capped != nil {
		h.Capped, h.Size, h.Max = true, migration.CappedSize(o.Capped.Size), o.Capped.Max
	}
	h.PrePost = o.PrePostImages != nil && *o.PrePostImages
	return h
}

// HeldOnServer are the options of a listCollections entry's options.
func HeldOnServer(options bson.Raw) Held {
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
	_ = bson.Unmarshal(options, &raw)
	h := Held{Capped: raw.Capped, Clustered: raw.ClusteredIndex != nil, Collation: raw.Collation, PrePost: raw.PrePost.Enabled}
	h.Size, _ = RawInt(options, "size")
	h.Max, _ = RawInt(options, "max")
	if n, ok := RawInt(options, "expireAfterSeconds"); ok {
		h.Expire = &n
	}
	if t := raw.Timeseries; t != nil {
		h.TS = &migration.Timeseries{TimeField: t.TimeField, MetaField: t.MetaField, Granularity: t.Granularity}
	}
	if h.Max == 0x7fffffff {
		h.Max = 0 // MongoDB stores "no max" as 2^31-1 (collection_options.cpp, adjustCappedMaxDocs)
	}
	return h
}

// RawInt reads a number (int32, int64 or double) at key of doc.
func RawInt(doc bson.Raw, key string) (int64, bool) {
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

// OptionsRefused is why coll's declared options o cannot be made on the
// existing collection that holds held (onServer: the server has it, not
// only an earlier pending migration); "" when they can.
func OptionsRefused(coll string, o *migration.CollectionOptions, held Held, onServer bool) string {
	where := "the collection exists"
	if onServer {
		where = "the server's " + coll + " exists"
	}
	switch {
	case o.Capped != nil && !held.Capped:
		return fmt.Sprintf("%s and is not capped: MongoDB makes a collection capped only when it creates it (create a new collection and copy, or drop it first)", where)
	case o.Timeseries != nil && held.TS == nil:
		return fmt.Sprintf("%s and is not a time-series collection: MongoDB makes one only when it creates it", where)
	case o.ClusteredIndex && !held.Clustered:
		return fmt.Sprintf("%s and is not clustered: MongoDB clusters a collection only when it creates it", where)
	case o.Collation != nil && !collationHolds(held.Collation, o.Collation):
		return fmt.Sprintf("%s with another default collation (%s): MongoDB sets it only when it creates the collection", where, BSONText(held.Collation))
	case o.Timeseries != nil && (o.Timeseries.TimeField != held.TS.TimeField || o.Timeseries.MetaField != held.TS.MetaField):
		return fmt.Sprintf("its timeField and metaField are %q and %q: MongoDB cannot change them", held.TS.TimeField, held.TS.MetaField)
	}
	return ""
}

// Change is one collMod's fields, the features it needs and, when the
// server cannot make it, why.
type Change struct {
	Fields   bson.D
	Features []string
	Refused  string
}

// OptionChanges are the collMods that move held to o (a capped size or
// max, a time-series collection's granularity and expiry, the pre- and
// post-images), in that order.
func OptionChanges(o *migration.CollectionOptions, held Held) []Change {
	var out []Change
	if o.Capped != nil && (migration.CappedSize(o.Capped.Size) != held.Size || o.Capped.Max != held.Max) {
		fields := bson.D{{Key: "cappedSize", Value: o.Capped.Size}}
		if o.Capped.Max > 0 || held.Max > 0 {
			fields = append(fields, bson.E{Key: "cappedMax", Value: o.Capped.Max})
		}
		out = append(out, Change{Fields: fields, Features: []string{probe.FeatureCappedResize}})
	}
	if t := o.Timeseries; t != nil && t.Granularity != "" && t.Granularity != held.TS.Granularity {
		c := Change{Fields: bson.D{{Key: "timeseries", Value: bson.D{{Key: "granularity", Value: t.Granularity}}}}, Features: []string{probe.FeatureTimeseriesModify}}
		if slices.Index(migration.Granularities, t.Granularity) < slices.Index(migration.Granularities, defaultGranularity(held.TS.Granularity)) {
			c.Refused = fmt.Sprintf("the granularity is %s: MongoDB only makes it coarser (src/mongo/db/timeseries/timeseries_options.cpp)", held.TS.Granularity)
		}
		out = append(out, c)
	}
	if o.ExpireAfterSeconds != nil && (held.Expire == nil || *held.Expire != *o.ExpireAfterSeconds) {
		out = append(out, Change{Fields: bson.D{{Key: "expireAfterSeconds", Value: *o.ExpireAfterSeconds}}, Features: []string{probe.FeatureTimeseriesModify}})
	}
	if o.PrePostImages != nil && *o.PrePostImages != held.PrePost {
		out = append(out, Change{Fields: bson.D{{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: *o.PrePostImages}}}}, Features: []string{probe.FeaturePrePostModify}})
	}
	return out
}

// After is what h becomes once OptionChanges(o, h) are made (a
// granularity the server refuses is left as it is): what a later
// migration of the same run finds.
func (h Held) After(o *migration.CollectionOptions) Held {
	if o.Capped != nil {
		h.Size, h.Max = migration.CappedSize(o.Capped.Size), o.Capped.Max
	}
	if t := o.Timeseries; t != nil && t.Granularity != "" && h.TS != nil &&
		slices.Index(migration.Granularities, t.Granularity) >= slices.Index(migration.Granularities, defaultGranularity(h.TS.Granularity)) {
		ts := *h.TS
		ts.Granularity = t.Granularity
		h.TS = &ts
	}
	if o.ExpireAfterSeconds != nil {
		h.Expire = o.ExpireAfterSeconds
	}
	if o.PrePostImages != nil {
		h.PrePost = *o.PrePostImages
	}
	return h
}

// defaultGranularity is a granularity as MongoDB defaults it (seconds).
func defaultGranularity(g string) string {
	if g == "" {
		return "seconds"
	}
	return g
}

// CreateFeatures are the features a create with options o needs.
func CreateFeatures(o *migration.CollectionOptions) []string {
	var f []string
	if o.Capped != nil {
		f = append(f, probe.FeatureCapped)
	}
	if o.Timeseries != nil {
		f = append(f, probe.FeatureTimeseries)
	}
	if o.ClusteredIndex {
		f = append(f, probe.FeatureClustered)
	}
	if o.Collation != nil {
		f = append(f, probe.FeatureCollation)
	}
	if o.PrePostImages != nil && *o.PrePostImages {
		f = append(f, probe.FeaturePrePost)
	}
	return f
}

func collationHolds(held, want bson.D) bool {
	for _, w := range want {
		found := false
		for _, h := range held {
			if h.Key == w.Key && fmt.Sprint(h.Value) == fmt.Sprint(w.Value) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// BSONText is d as relaxed Extended JSON ("none" for nil).
func BSONText(d bson.D) string {
	if d == nil {
		return "none"
	}
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
