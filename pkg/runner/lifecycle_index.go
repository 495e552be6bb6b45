package runner

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// heldIndex is an index as listIndexes shows it (or as the files leave
// it, for a collection the server does not have yet).
type heldIndex struct {
	found  bool
	expire *int64
	hidden bool
}

func (pl *lifecyclePlan) heldIndex(ctx context.Context, coll, name string) (heldIndex, error) {
	if _, ok := pl.srv[coll]; !ok {
		idx, ok := migration.IndexStateBefore(pl.r.migrations, coll, name, pl.m.Version)
		return heldIndex{found: ok, expire: idx.ExpireAfterSeconds, hidden: idx.Hidden}, nil
	}
	cur, err := pl.r.db.Collection(coll).Indexes().List(ctx)
	if err != nil {
		return heldIndex{}, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	var all []bson.Raw
	if err := cur.All(ctx, &all); err != nil {
		return heldIndex{}, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	for _, idx := range all {
		if n, _ := idx.Lookup("name").StringValueOK(); n != name {
			continue
		}
		h := heldIndex{found: true}
		if n, ok := lifecycle.RawInt(idx, "expireAfterSeconds"); ok {
			h.expire = &n
		}
		h.hidden, _ = idx.Lookup("hidden").BooleanOK()
		return h, nil
	}
	return heldIndex{}, nil
}

// indexCommands are c's declared rebuilds (drop, then build again, with
// the documents the build must index as its cost) and in-place changes.
func (pl *lifecyclePlan) indexCommands(ctx context.Context, c *migration.Collection) ([]Command, error) {
	var cmds []Command
	for _, idx := range c.Indexes.Rebuild {
		n, err := pl.indexedDocuments(ctx, c.Name, idx)
		if err != nil {
			return nil, err
		}
		build := createIndexCommand(c.Name, idx)
		build.Documents = &n
		build.Cost = lifecycle.RebuildCost(idx, n)
		cmds = append(cmds, dropIndexCommand(c.Name, idx.Name), build)
	}
	for _, ch := range c.Indexes.Change {
		cmd := newCommand(c.Name, "collMod", ch.Name, bson.D{{Key: "collMod", Value: c.Name}, {Key: "index", Value: ch.Spec()}})
		held, err := pl.heldIndex(ctx, c.Name, ch.Name)
		if err != nil {
			return nil, err
		}
		cmd.Features, cmd.Refused = lifecycle.IndexChange(c.Name, ch, held.found, held.expire)
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// indexedDocuments is how many documents of coll an index build must
// index: those its partial filter matches, else all (estimated).
func (pl *lifecyclePlan) indexedDocuments(ctx context.Context, coll string, idx migration.Index) (int64, error) {
	if _, ok := pl.srv[coll]; !ok {
		return 0, nil
	}
	c := pl.r.db.Collection(coll)
	var n int64
	var err error
	if idx.PartialFilterExpression != nil {
		n, err = c.CountDocuments(ctx, idx.PartialFilterExpression)
	} else {
		n, err = c.EstimatedDocumentCount(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("count the documents index %s of %s must index: %w", idx.Name, coll, err)
	}
	return n, nil
}

// viewCommand creates v (or changes it in place when it exists), or drops it.
func (pl *lifecyclePlan) viewCommand(v *migration.View) Command {
	s, onServer := pl.srv[v.Name]
	exists := onServer || migration.ViewBefore(pl.r.migrations, v.Name, pl.m.Version) != nil
	st := lifecycle.View(v, exists, onServer, s.Type)
	var cmd Command
	switch st.Name {
	case "drop":
		cmd = newCommand(v.Name, "drop", "", bson.D{{Key: "drop", Value: v.Name}})
	case "collMod":
		cmd = collModCommand(v.Name, st.Fields)
	default:
		cmd = createCommand(v.Name, st.Fields)
	}
	cmd.Features, cmd.Refused = st.Features, st.Refused
	if !v.Drop {
		pl.exists[v.Name] = true
	}
	return cmd
}

// withExpiry tags the index builds with the features they need (TTL,
// hidden) and puts before each TTL build, or lowering of a TTL, on a
// collection the server has the deletion of the backlog the index would
// delete at once, when there is one.
func (pl *lifecyclePlan) withExpiry(ctx context.Context, cmds []Command) ([]Command, error) {
	var out []Command
	for _, c := range cmds {
		idx, ttl := pl.ttlOf(ctx, c)
		if c.Name == "createIndexes" {
			if idx.ExpireAfterSeconds != nil {
				c.Features = append(c.Features, probe.FeatureTTL)
			}
			if idx.Hidden {
				c.Features = append(c.Features, probe.FeatureHidden)
			}
		}
		if ttl && c.Refused == "" {
			del, err := pl.r.expiry().Command(ctx, pl.m.Version, c.Collection, idx)
			if err != nil {
				return nil, err
			}
			if del != nil {
				out = append(out, *del)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ttlOf returns the index c builds or changes, and whether c makes it
// expire documents sooner than the server does now: a new TTL index on a
// collection the server has, or a lower expireAfterSeconds.
func (pl *lifecyclePlan) ttlOf(ctx context.Context, c Command) (migration.Index, bool) {
	coll := pl.m.Collection(c.Collection)
	if coll == nil || c.Index == "" {
		return migration.Index{}, false
	}
	if _, ok := pl.srv[c.Collection]; !ok {
		return migration.Index{}, false // no documents yet
	}
	switch c.Name {
	case "createIndexes":
		for _, list := range [][]migration.Index{coll.Indexes.Create, coll.Indexes.Rebuild} {
			for _, idx := range list {
				if idx.Name == c.Index {
					return idx, idx.ExpireAfterSeconds != nil
				}
			}
		}
	case "collMod":
		for _, ch := range coll.Indexes.Change {
			if ch.Name != c.Index || ch.ExpireAfterSeconds == nil {
				continue
			}
			held, err := pl.heldIndex(ctx, c.Collection, ch.Name)
			if err != nil || held.expire == nil || *held.expire <= *ch.ExpireAfterSeconds {
				return migration.Index{}, false
			}
			idx, _ := migration.IndexStateBefore(pl.r.migrations, c.Collection, ch.Name, pl.m.Version)
			if len(idx.Keys) == 0 {
				return migration.Index{}, false // created outside the files: its key is unknown
			}
			return ch.Apply(idx), true
		}
	}
	return migration.Index{}, false
}
