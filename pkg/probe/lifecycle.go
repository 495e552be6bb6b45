package probe

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Lifecycle features: the collection options, views and index changes a
// migration may declare (docs/lifecycle.md). Each is tried in a scratch
// database and read back (listCollections, listIndexes): a server that
// accepts an option and keeps nothing of it (FerretDB v1's clusteredIndex,
// FerretDB 2's collation) lacks it as surely as one that refuses it.
const (
	FeatureCapped           = "capped collections"
	FeatureCappedResize     = "collMod of a capped collection's size and max"
	FeatureTimeseries       = "time-series collections"
	FeatureTimeseriesModify = "collMod of a time-series collection's expireAfterSeconds and granularity"
	FeatureClustered        = "clustered collections"
	FeatureCollation        = "a collection's default collation"
	FeaturePrePost          = "change-stream pre- and post-images"
	FeaturePrePostModify    = "collMod of change-stream pre- and post-images"
	FeatureViews            = "views"
	FeatureViewsModify      = "collMod of a view's viewOn and pipeline"
	FeatureTTL              = "TTL indexes"
	FeatureTTLModify        = "collMod of a TTL index's expireAfterSeconds"
	FeatureHidden           = "hidden indexes"
	FeatureHiddenModify     = "collMod of an index's hidden option"
)

// LifecycleFeatures lists the features [Lifecycle] probes, in its order.
var LifecycleFeatures = []string{
	FeatureCapped, FeatureCappedResize, FeatureTimeseries, FeatureTimeseriesModify, FeatureClustered,
	FeatureCollation, FeaturePrePost, FeaturePrePostModify, FeatureViews, FeatureViewsModify,
	FeatureTTL, FeatureTTLModify, FeatureHidden, FeatureHiddenModify,
}

// LifecycleSupport is which lifecycle features the server has, by feature
// name (the Feature constants), and what else the probes noticed.
type LifecycleSupport struct {
	Features map[string]Capability `json:"features"`
	// Notes are quirks of features the server has (a capped collection
	// holding more documents than its max right after the inserts).
	Notes []string `json:"notes,omitempty"`
}

// Feature is the capability of the named feature (unknown names are
// unavailable, with a reason saying so).
func (l *LifecycleSupport) Feature(name string) Capability {
	if c, ok := l.Features[name]; ok {
		return c
	}
	return Capability{Reason: name + " was not probed"}
}

// Lifecycle probes the lifecycle features in a scratch database
// (mongomig_probe_<random>) it drops before returning: nothing is read
// from or written to db. A feature the server refuses, or accepts without
// keeping, is unavailable with the reason; network failures and timeouts
// are errors.
func Lifecycle(ctx context.Context, db *mongo.Database) (*LifecycleSupport, error) {
	scratch := db.Client().Database(scratchName())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = scratch.Drop(dctx)
	}()
	l := &LifecycleSupport{Features: map[string]Capability{}}
	refused, err := classify(scratch.RunCommand(ctx, bson.D{{Key: "create", Value: "src"}}).Err(), "create")
	if err != nil {
		return nil, err
	}
	if refused.Reason != "" {
		for _, f := range LifecycleFeatures {
			l.Features[f] = refused
		}
		return l, nil
	}
	p := &lifecycleProbe{db: scratch, l: l}
	for _, step := range []func(context.Context) error{p.capped, p.timeseries, p.createOnly, p.prePost, p.views, p.ttl, p.hidden} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

type lifecycleProbe struct {
	db *mongo.Database
	l  *LifecycleSupport
}

// try sends cmd and, when the server accepts it, check's answer: "" when
// what was sent is held, else what the server kept instead. It returns
// whether the feature is available.
func (p *lifecycleProbe) try(ctx context.Context, feature, what string, cmd bson.D, check func(context.Context) (string, error)) (bool, error) {
	refused, err := classify(p.db.RunCommand(ctx, cmd).Err(), what)
	if err != nil {
		return false, err
	}
	if refused.Reason != "" {
		p.l.Features[feature] = refused
		return false, nil
	}
	miss, err := check(ctx)
	if err != nil {
		return false, err
	}
	if miss != "" {
		p.l.Features[feature] = Capability{Reason: what + " was accepted but " + miss}
		return false, nil
	}
	p.l.Features[feature] = Capability{Available: true}
	return true, nil
}

// options reads collection name's listCollections entry: its type and
// options ("" and nil when there is none).
func (p *lifecycleProbe) options(ctx context.Context, name string) (string, bson.Raw, error) {
	specs, err := p.db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
	if err != nil {
		return "", nil, fmt.Errorf("probe: listCollections of %s: %w", name, err)
	}
	if len(specs) != 1 {
		return "", nil, nil
	}
	return specs[0].Type, specs[0].Options, nil
}

// held checks that listCollections shows name's option path (dotted) with
// the value want (numbers compared as numbers).
func (p *lifecycleProbe) held(name, path string, want any) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		_, opts, err := p.options(ctx, name)
		if err != nil {
			return "", err
		}
		got, err := opts.LookupErr(splitPath(path)...)
		if err != nil {
			return fmt.Sprintf("listCollections shows no %s (the server dropped it)", path), nil
		}
		if !sameValue(got, want) {
			return fmt.Sprintf("listCollections shows %s: %s instead of %v", path, got, want), nil
		}
		return "", nil
	}
}

func (p *lifecycleProbe) capped(ctx context.Context) error {
	create := bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: int64(4096)}, {Key: "max", Value: int64(2)}}
	ok, err := p.try(ctx, FeatureCapped, "create with capped", create, p.held("capped", "max", 2))
	if !ok || err != nil {
		p.l.Features[FeatureCappedResize] = Capability{Reason: "not probed: " + p.l.Feature(FeatureCapped).Reason}
		return err
	}
	coll := p.db.Collection("capped")
	for i := range 3 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "i", Value: i}}); err != nil {
			return fmt.Errorf("probe: insert into a capped collection: %w", err)
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err == nil && n > 2 {
		p.l.Notes = append(p.l.Notes, fmt.Sprintf("a capped collection with max 2 held %d documents right after 3 inserts: the server removes the oldest later, not at the insert", n))
	}
	resize := bson.D{{Key: "collMod", Value: "capped"}, {Key: "cappedSize", Value: int64(8192)}, {Key: "cappedMax", Value: int64(4)}}
	_, err = p.try(ctx, FeatureCappedResize, "collMod with cappedSize and cappedMax", resize, p.held("capped", "max", 4))
	return err
}

func (p *lifecycleProbe) timeseries(ctx context.Context) error {
	create := bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m"}, {Key: "granularity", Value: "seconds"}}}, {Key: "expireAfterSeconds", Value: int64(3600)}}
	ok, err := p.try(ctx, FeatureTimeseries, "create with timeseries", create, p.held("ts", "timeseries.timeField", "t"))
	if !ok || err != nil {
		p.l.Features[FeatureTimeseriesModify] = Capability{Reason: "not probed: " + p.l.Feature(FeatureTimeseries).Reason}
		return err
	}
	mod := bson.D{{Key: "collMod", Value: "ts"}, {Key: "expireAfterSeconds", Value: int64(7200)}}
	_, err = p.try(ctx, FeatureTimeseriesModify, "collMod with expireAfterSeconds", mod, p.held("ts", "expireAfterSeconds", 7200))
	return err
}

// createOnly probes the options only create sets: clusteredIndex and
// collation.
func (p *lifecycleProbe) createOnly(ctx context.Context) error {
	cl := bson.D{{Key: "create", Value: "clustered"}, {Key: "clusteredIndex", Value: bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}}}
	if _, err := p.try(ctx, FeatureClustered, "create with clusteredIndex", cl, p.held("clustered", "clusteredIndex.unique", true)); err != nil {
		return err
	}
	co := bson.D{{Key: "create", Value: "collated"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}}
	_, err := p.try(ctx, FeatureCollation, "create with collation", co, p.held("collated", "collation.locale", "fr"))
	return err
}

func (p *lifecycleProbe) prePost(ctx context.Context) error {
	create := bson.D{{Key: "create", Value: "images"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}
	if _, err := p.try(ctx, FeaturePrePost, "create with changeStreamPreAndPostImages", create, p.held("images", "changeStreamPreAndPostImages.enabled", true)); err != nil {
		return err
	}
	mod := bson.D{{Key: "collMod", Value: "src"}, {Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: true}}}}
	_, err := p.try(ctx, FeaturePrePostModify, "collMod with changeStreamPreAndPostImages", mod, p.held("src", "changeStreamPreAndPostImages.enabled", true))
	return err
}

func (p *lifecycleProbe) views(ctx context.Context) error {
	stage := func(v int) bson.A { return bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: v}}}}} }
	create := bson.D{{Key: "create", Value: "view"}, {Key: "viewOn", Value: "src"}, {Key: "pipeline", Value: stage(1)}}
	ok, err := p.try(ctx, FeatureViews, "create with viewOn", create, p.held("view", "viewOn", "src"))
	if !ok || err != nil {
		p.l.Features[FeatureViewsModify] = Capability{Reason: "not probed: " + p.l.Feature(FeatureViews).Reason}
		return err
	}
	mod := bson.D{{Key: "collMod", Value: "view"}, {Key: "viewOn", Value: "src"}, {Key: "pipeline", Value: stage(2)}}
	_, err = p.try(ctx, FeatureViewsModify, "collMod of a view", mod, p.held("view", "pipeline.0.$match.a", 2))
	return err
}

// index reads index name of collection src from listIndexes (nil: none).
func (p *lifecycleProbe) index(ctx context.Context, name string) (bson.Raw, error) {
	cur, err := p.db.Collection("src").Indexes().List(ctx)
	if err != nil {
		return nil, fmt.Errorf("probe: listIndexes: %w", err)
	}
	var all []bson.Raw
	if err := cur.All(ctx, &all); err != nil {
		return nil, fmt.Errorf("probe: listIndexes: %w", err)
	}
	for _, idx := range all {
		if n, _ := idx.Lookup("name").StringValueOK(); n == name {
			return idx, nil
		}
	}
	return nil, nil
}

// indexHeld checks that listIndexes shows index name with field = want
// (want false also matches a missing field).
func (p *lifecycleProbe) indexHeld(name, field string, want any) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		idx, err := p.index(ctx, name)
		switch {
		case err != nil:
			return "", err
		case idx == nil:
			return "listIndexes shows no index " + name, nil
		}
		got, lerr := idx.LookupErr(field)
		if lerr != nil && want == false {
			return "", nil
		}
		if lerr != nil || !sameValue(got, want) {
			return fmt.Sprintf("listIndexes shows %s", idx), nil
		}
		return "", nil
	}
}

func createIndex(name string, key string, opt bson.E) bson.D {
	spec := bson.D{{Key: "key", Value: bson.D{{Key: key, Value: 1}}}, {Key: "name", Value: name}}
	if opt.Key != "" {
		spec = append(spec, opt)
	}
	return bson.D{{Key: "createIndexes", Value: "src"}, {Key: "indexes", Value: bson.A{spec}}}
}

func (p *lifecycleProbe) ttl(ctx context.Context) error {
	create := createIndex("at_1", "at", bson.E{Key: "expireAfterSeconds", Value: int64(60)})
	ok, err := p.try(ctx, FeatureTTL, "createIndexes with expireAfterSeconds", create, p.indexHeld("at_1", "expireAfterSeconds", 60))
	if !ok || err != nil {
		p.l.Features[FeatureTTLModify] = Capability{Reason: "not probed: " + p.l.Feature(FeatureTTL).Reason}
		return err
	}
	mod := bson.D{{Key: "collMod", Value: "src"}, {Key: "index", Value: bson.D{{Key: "name", Value: "at_1"}, {Key: "expireAfterSeconds", Value: int64(120)}}}}
	_, err = p.try(ctx, FeatureTTLModify, "collMod of an index's expireAfterSeconds", mod, p.indexHeld("at_1", "expireAfterSeconds", 120))
	return err
}

func (p *lifecycleProbe) hidden(ctx context.Context) error {
	create := createIndex("h_1", "h", bson.E{Key: "hidden", Value: true})
	if _, err := p.try(ctx, FeatureHidden, "createIndexes with hidden", create, p.indexHeld("h_1", "hidden", true)); err != nil {
		return err
	}
	// collMod is tried on an index of its own, created visible.
	if err := p.db.RunCommand(ctx, createIndex("v_1", "v", bson.E{})).Err(); err != nil {
		refused, cerr := classify(err, "createIndexes")
		if cerr != nil {
			return cerr
		}
		p.l.Features[FeatureHiddenModify] = refused
		return nil
	}
	mod := bson.D{{Key: "collMod", Value: "src"}, {Key: "index", Value: bson.D{{Key: "name", Value: "v_1"}, {Key: "hidden", Value: true}}}}
	_, err := p.try(ctx, FeatureHiddenModify, "collMod of an index's hidden option", mod, p.indexHeld("v_1", "hidden", true))
	return err
}

func splitPath(path string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			out = append(out, path[start:i])
			start = i + 1
		}
	}
	return out
}

// sameValue compares a BSON value with a Go one, numbers as numbers.
func sameValue(got bson.RawValue, want any) bool {
	switch w := want.(type) {
	case int:
		n, ok := got.AsInt64OK()
		if !ok {
			f, fok := got.DoubleOK()
			return fok && f == float64(w)
		}
		return n == int64(w)
	case string:
		s, ok := got.StringValueOK()
		return ok && s == w
	case bool:
		b, ok := got.BooleanOK()
		return ok && b == w
	}
	return false
}
