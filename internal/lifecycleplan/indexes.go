package lifecycleplan

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
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

func (pl *migrationPlan) heldIndex(ctx context.Context, coll, name string) (heldIndex, error) {
	if h, ok := pl.p.Simulated.index(coll, name); ok {
		return h, nil // an earlier pending migration of the run creates, changes or drops it
	}
	if _, ok := pl.srv[coll]; !ok {
		idx, ok := migration.IndexStateBefore(pl.p.Migrations, coll, name, pl.m.Version)
		return heldIndex{found: ok, expire: idx.ExpireAfterSeconds, hidden: idx.Hidden}, nil
	}
	cur, err := pl.p.DB.Collection(coll).Indexes().List(ctx)
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
func (pl *migrationPlan) indexCommands(ctx context.Context, c *migration.Collection) ([]cmddoc.Command, error) {
	var cmds []cmddoc.Command
	for _, idx := range c.Indexes.Rebuild {
		n, err := pl.indexedDocuments(ctx, c.Name, idx)
		if err != nil {
			return nil, err
		}
		build := cmddoc.CreateIndex(c.Name, idx)
		build.Documents = &n
		build.Cost = lifecycle.RebuildCost(idx, n)
		cmds = append(cmds, cmddoc.DropIndex(c.Name, idx.Name), build)
	}
	for _, ch := range c.Indexes.Change {
		cmd := cmddoc.New(c.Name, "collMod", ch.Name, bson.D{{Key: "collMod", Value: c.Name}, {Key: "index", Value: ch.Spec()}})
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
func (pl *migrationPlan) indexedDocuments(ctx context.Context, coll string, idx migration.Index) (int64, error) {
	if _, ok := pl.srv[coll]; !ok {
		return 0, nil
	}
	c := pl.p.DB.Collection(coll)
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
func (pl *migrationPlan) viewCommand(v *migration.View) cmddoc.Command {
	s, onServer := pl.srv[v.Name]
	exists := onServer || migration.ViewBefore(pl.p.Migrations, v.Name, pl.m.Version) != nil
	if e, ok := pl.p.Simulated.view(v.Name); ok {
		exists = e // an earlier pending migration of the run creates or drops it
		onServer = onServer && e
	}
	st := lifecycle.View(v, exists, onServer, s.Type)
	var cmd cmddoc.Command
	switch st.Name {
	case "drop":
		cmd = cmddoc.New(v.Name, "drop", "", bson.D{{Key: "drop", Value: v.Name}})
	case "collMod":
		cmd = cmddoc.CollMod(v.Name, st.Fields)
	default:
		cmd = cmddoc.Create(v.Name, st.Fields)
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
func (pl *migrationPlan) withExpiry(ctx context.Context, cmds []cmddoc.Command) ([]cmddoc.Command, error) {
	var out []cmddoc.Command
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
		if ttl && c.Refused == "" && pl.p.Expiry != nil {
			del, err := pl.p.Expiry(ctx, pl.m.Version, c.Collection, idx)
			if err != nil {
				return nil, err
			}
			if del, err = pl.afterEarlier(ctx, c.Collection, idx, del); err != nil {
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
func (pl *migrationPlan) ttlOf(ctx context.Context, c cmddoc.Command) (migration.Index, bool) {
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
			idx, _ := migration.IndexStateBefore(pl.p.Migrations, c.Collection, ch.Name, pl.m.Version)
			if len(idx.Keys) == 0 {
				return migration.Index{}, false // created outside the files: its key is unknown
			}
			return ch.Apply(idx), true
		}
	}
	return migration.Index{}, false
}
