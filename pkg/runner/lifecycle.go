package runner

// Collection lifecycle (docs/lifecycle.md): collection options, index
// changes in place and declared rebuilds, views, and the expired backlog a
// new TTL index would delete at once (expiry.go). Each command carries the
// features it needs (Command.Features); a feature the server lacks, or a
// change the server cannot make to what it holds (capped on an existing
// collection, say), refuses the plan with the reason before anything is
// sent ([LifecycleRefusedError]): never sent and failed.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// LifecycleRefusal is one lifecycle command a plan cannot send.
type LifecycleRefusal struct {
	Version    int64         `json:"version"`
	File       string        `json:"file"`
	Pos        migration.Pos `json:"pos"`
	Collection string        `json:"collection"`
	// Command is what would have been sent.
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// LifecycleRefusedError is up (or its plan) refusing, before sending
// anything, lifecycle commands the server cannot carry out.
type LifecycleRefusedError struct {
	Refusals []LifecycleRefusal
}

func (e *LifecycleRefusedError) Error() string {
	var lines []string
	for _, l := range e.Unwrap() {
		lines = append(lines, l.Error())
	}
	return strings.Join(lines, "\n")
}

// Unwrap is the message's lines, one error each (a header, then a
// refusal a line), so that a renderer can print them as lines.
func (e *LifecycleRefusedError) Unwrap() []error {
	out := []error{fmt.Errorf("the server cannot apply %d collection lifecycle change(s); nothing was sent:", len(e.Refusals))}
	for _, r := range e.Refusals {
		out = append(out, fmt.Errorf("  %s:%d:%d: %s: %s: %s", r.File, r.Pos.Line, r.Pos.Column, r.Collection, r.Command, r.Reason))
	}
	return out
}

// lifecycleCaps are the server's lifecycle features, probed once (in a
// scratch database) the first time a command needs one.
func (r *Runner) lifecycleCaps(ctx context.Context) (*probe.LifecycleSupport, error) {
	if r.cfg.lifecycle == nil {
		l, err := probe.Lifecycle(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errProbe, err)
		}
		r.cfg.lifecycle = l
	}
	return r.cfg.lifecycle, nil
}

// checkLifecycle refuses the planned commands that are Refused or need a
// feature the server lacks, naming each with its file position.
func (r *Runner) checkLifecycle(ctx context.Context, planned []PlannedMigration) error {
	var out []LifecycleRefusal
	for _, pm := range planned {
		m := r.migrationByVersion(pm.Version)
		for _, c := range pm.Commands {
			reason := c.Refused
			if reason == "" && len(c.Features) > 0 {
				caps, err := r.lifecycleCaps(ctx)
				if err != nil {
					return err
				}
				for _, f := range c.Features {
					if cp := caps.Feature(f); !cp.Available {
						reason = "the server lacks " + f + ": " + cp.Reason
						break
					}
				}
			}
			if reason != "" {
				out = append(out, LifecycleRefusal{Version: pm.Version, File: pm.File, Pos: lifecyclePos(m, c), Collection: c.Collection, Command: describeCommand(c), Reason: reason})
			}
		}
	}
	if len(out) > 0 {
		return &LifecycleRefusedError{Refusals: out}
	}
	return nil
}

// lifecyclePos is where m declares what c sends.
func lifecyclePos(m *migration.Migration, c Command) migration.Pos {
	if m == nil {
		return migration.Pos{}
	}
	if v := m.View(c.Collection); v != nil {
		return v.Pos
	}
	coll := m.Collection(c.Collection)
	if coll == nil {
		return migration.Pos{}
	}
	if c.Index != "" {
		for _, list := range [][]migration.Index{coll.Indexes.Create, coll.Indexes.Rebuild} {
			for _, idx := range list {
				if idx.Name == c.Index {
					return idx.Pos
				}
			}
		}
		for _, ch := range coll.Indexes.Change {
			if ch.Name == c.Index {
				return ch.Pos
			}
		}
	}
	if coll.Options != nil {
		return coll.Options.Pos
	}
	return coll.Pos
}

// hasLifecycle reports whether m declares options, index changes,
// rebuilds, views or indexes that need a feature (TTL, hidden).
func hasLifecycle(m *migration.Migration) bool {
	if len(m.Views) > 0 {
		return true
	}
	for _, c := range m.Collections {
		if c.Options != nil || len(c.Indexes.Change) > 0 || len(c.Indexes.Rebuild) > 0 {
			return true
		}
		for _, idx := range c.Indexes.Create {
			if idx.ExpireAfterSeconds != nil || idx.Hidden {
				return true
			}
		}
	}
	return false
}

// migrationCommands are the commands that apply m: each collection's
// create with its options first (so that its validator follows as a
// collMod), then [upCommands], then the index rebuilds and changes, the
// expired backlogs before the TTL indexes that would delete them, and the
// views last (they may read a collection created above).
func (r *Runner) migrationCommands(ctx context.Context, m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]Command, error) {
	if !hasLifecycle(m) {
		return upCommands(m, exists, validator)
	}
	srv, err := r.serverCollections(ctx)
	if err != nil {
		return nil, err
	}
	pl := &lifecyclePlan{r: r, m: m, srv: srv, exists: exists}
	var cmds []Command
	for _, c := range m.Collections {
		if c.Options != nil {
			cmds = append(cmds, pl.optionCommands(c)...)
		}
	}
	up, err := upCommands(m, exists, validator)
	if err != nil {
		return nil, err
	}
	cmds = append(cmds, up...)
	for _, c := range m.Collections {
		more, err := pl.indexCommands(ctx, c)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, more...)
	}
	for _, v := range m.Views {
		cmds = append(cmds, pl.viewCommand(v))
	}
	return pl.withExpiry(ctx, cmds)
}

// serverColl is a collection (or view) as listCollections shows it.
type serverColl struct {
	Type    string
	Options bson.Raw
}

func (r *Runner) serverCollections(ctx context.Context) (map[string]serverColl, error) {
	specs, err := r.db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := make(map[string]serverColl, len(specs))
	for _, s := range specs {
		out[s.Name] = serverColl{Type: s.Type, Options: s.Options}
	}
	return out, nil
}

// lifecyclePlan builds one migration's lifecycle commands.
type lifecyclePlan struct {
	r      *Runner
	m      *migration.Migration
	srv    map[string]serverColl
	exists map[string]bool
}

func (pl *lifecyclePlan) optionCommands(c *migration.Collection) []Command {
	o := c.Options
	if !pl.exists[c.Name] {
		pl.exists[c.Name] = true
		cmd := createCommand(c.Name, o.Command())
		cmd.Features = createFeatures(o)
		return []Command{cmd}
	}
	held, onServer := pl.heldOptions(c.Name)
	var cmds []Command
	refuse := func(what string, args ...any) {
		cmd := collModCommand(c.Name, o.Command())
		cmd.Refused = fmt.Sprintf(what, args...)
		cmds = append(cmds, cmd)
	}
	where := "the collection exists"
	if onServer {
		where = "the server's " + c.Name + " exists"
	}
	switch {
	case o.Capped != nil && !held.capped:
		refuse("%s and is not capped: MongoDB makes a collection capped only when it creates it (create a new collection and copy, or drop it first)", where)
	case o.Timeseries != nil && held.ts == nil:
		refuse("%s and is not a time-series collection: MongoDB makes one only when it creates it", where)
	case o.ClusteredIndex && !held.clustered:
		refuse("%s and is not clustered: MongoDB clusters a collection only when it creates it", where)
	case o.Collation != nil && !collationHolds(held.collation, o.Collation):
		refuse("%s with another default collation (%s): MongoDB sets it only when it creates the collection", where, bsonText(held.collation))
	case o.Timeseries != nil && (o.Timeseries.TimeField != held.ts.TimeField || o.Timeseries.MetaField != held.ts.MetaField):
		refuse("its timeField and metaField are %q and %q: MongoDB cannot change them", held.ts.TimeField, held.ts.MetaField)
	}
	if len(cmds) > 0 {
		return cmds
	}
	return pl.optionChanges(c.Name, o, held)
}

// optionChanges are the collMods that move what the server holds to o
// (a capped size or max, a time-series collection's granularity and
// expiry, the pre- and post-images).
func (pl *lifecyclePlan) optionChanges(coll string, o *migration.CollectionOptions, held heldOpts) []Command {
	var cmds []Command
	if o.Capped != nil && (migration.CappedSize(o.Capped.Size) != held.size || o.Capped.Max != held.max) {
		fields := bson.D{{Key: "cappedSize", Value: o.Capped.Size}}
		if o.Capped.Max > 0 || held.max > 0 {
			fields = append(fields, bson.E{Key: "cappedMax", Value: o.Capped.Max})
		}
		cmd := collModCommand(coll, fields)
		cmd.Features = []string{probe.FeatureCappedResize}
		cmds = append(cmds, cmd)
	}
	if t := o.Timeseries; t != nil && t.Granularity != "" && t.Granularity != held.ts.Granularity {
		cmd := collModCommand(coll, bson.D{{Key: "timeseries", Value: bson.D{{Key: "granularity", Value: t.Granularity}}}})
		cmd.Features = []string{probe.FeatureTimeseriesModify}
		if slices.Index(migration.Granularities, t.Granularity) < slices.Index(migration.Granularities, defaultGranularity(held.ts.Granularity)) {
			cmd.Refused = fmt.Sprintf("the granularity is %s: MongoDB only makes it coarser (src/mongo/db/timeseries/timeseries_options.cpp)", held.ts.Granularity)
		}
		cmds = append(cmds, cmd)
	}
	if o.ExpireAfterSeconds != nil && (held.expire == nil || *held.expire != *o.ExpireAfterSeconds) {
		cmd := collModCommand(coll, bson.D{{Key: "expireAfterSeconds", Value: *o.ExpireAfterSeconds}})
		cmd.Features = []string{probe.FeatureTimeseriesModify}
		cmds = append(cmds, cmd)
	}
	if o.PrePostImages != nil && *o.PrePostImages != held.prePost {
		cmd := collModCommand(coll, bson.D{{Key: "changeStreamPreAndPostImages", Value: bson.D{{Key: "enabled", Value: *o.PrePostImages}}}})
		cmd.Features = []string{probe.FeaturePrePostModify}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// defaultGranularity is a granularity as MongoDB defaults it (seconds).
func defaultGranularity(g string) string {
	if g == "" {
		return "seconds"
	}
	return g
}

func createFeatures(o *migration.CollectionOptions) []string {
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

func bsonText(d bson.D) string {
	if d == nil {
		return "none"
	}
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
