package lifecycleplan

// A run's simulated state: a dry run (and up's check before it sends
// anything) plans every pending migration before sending any, so the
// planning of migration N must see what the pending migrations before N
// will have created, changed or dropped; up sends each migration before
// it plans the next, and plans from the server alone. With the same
// view of what is held, the two plan the same commands.

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Simulated is what the migrations planned so far in one run leave on
// the server (indexes, collection options, views), over what the server
// holds. The zero value is ready: nothing planned yet.
type Simulated struct {
	indexes map[string]map[string]heldIndex // collection, index name (found false: dropped)
	options map[string]lifecycle.Held
	views   map[string]bool // false: dropped
	// expired are the filters of the expired backlogs deleted so far, by
	// collection: a later deletion counts only what they leave.
	expired map[string][]bson.D
}

func (s *Simulated) index(coll, name string) (heldIndex, bool) {
	if s == nil {
		return heldIndex{}, false
	}
	h, ok := s.indexes[coll][name]
	return h, ok
}

func (s *Simulated) setIndex(coll, name string, h heldIndex) {
	if s.indexes == nil {
		s.indexes = map[string]map[string]heldIndex{}
	}
	if s.indexes[coll] == nil {
		s.indexes[coll] = map[string]heldIndex{}
	}
	s.indexes[coll][name] = h
}

func (s *Simulated) option(coll string) (lifecycle.Held, bool) {
	if s == nil {
		return lifecycle.Held{}, false
	}
	h, ok := s.options[coll]
	return h, ok
}

func (s *Simulated) setOption(coll string, h lifecycle.Held) {
	if s == nil {
		return
	}
	if s.options == nil {
		s.options = map[string]lifecycle.Held{}
	}
	s.options[coll] = h
}

func (s *Simulated) view(name string) (exists, ok bool) {
	if s == nil {
		return false, false
	}
	exists, ok = s.views[name]
	return exists, ok
}

// record puts into the simulated state what m leaves: its index drops,
// then its creates and rebuilds, then its changes in place (the order the
// commands are sent), and its views. Collection options are recorded as
// they are planned (optionCommands).
func (pl *migrationPlan) record(ctx context.Context) error {
	s := pl.p.Simulated
	if s == nil {
		return nil
	}
	for _, c := range pl.m.Collections {
		for _, d := range c.Indexes.Drop {
			s.setIndex(c.Name, d.Name, heldIndex{})
		}
		for _, list := range [][]migration.Index{c.Indexes.Create, c.Indexes.Rebuild} {
			for _, idx := range list {
				s.setIndex(c.Name, idx.Name, heldIndex{found: true, expire: idx.ExpireAfterSeconds, hidden: idx.Hidden})
			}
		}
		for _, ch := range c.Indexes.Change {
			h, err := pl.heldIndex(ctx, c.Name, ch.Name)
			if err != nil {
				return err
			}
			if !h.found {
				continue // refused: the plan fails
			}
			if ch.ExpireAfterSeconds != nil && h.expire != nil {
				h.expire = ch.ExpireAfterSeconds
			}
			if ch.Hidden != nil {
				h.hidden = *ch.Hidden
			}
			s.setIndex(c.Name, ch.Name, h)
		}
	}
	for _, v := range pl.m.Views {
		if s.views == nil {
			s.views = map[string]bool{}
		}
		s.views[v.Name] = !v.Drop
	}
	return nil
}

// afterEarlier is del (the deletion of coll's expired backlog, counted on
// the server) counting only the documents the deletions planned before it
// in the run leave; nil when they leave none. It records del's filter for
// the deletions after it.
func (pl *migrationPlan) afterEarlier(ctx context.Context, coll string, idx migration.Index, del *cmddoc.Command) (*cmddoc.Command, error) {
	s := pl.p.Simulated
	if s == nil || del == nil {
		return del, nil
	}
	filter, _ := fieldOf(del.Doc, "filter").(bson.D)
	earlier := s.expired[coll]
	if s.expired == nil {
		s.expired = map[string][]bson.D{}
	}
	s.expired[coll] = append(earlier, filter)
	if len(earlier) == 0 || filter == nil {
		return del, nil
	}
	nor := make(bson.A, len(earlier))
	for i, f := range earlier {
		nor[i] = f
	}
	n, err := pl.p.DB.Collection(coll).CountDocuments(ctx, bson.D{{Key: "$and", Value: bson.A{filter, bson.D{{Key: "$nor", Value: nor}}}}})
	if err != nil {
		return nil, fmt.Errorf("count the expired documents of %s (index %s): %w", coll, idx.Name, err)
	}
	if n == 0 {
		return nil, nil
	}
	out := *del
	out.Documents = &n
	batch, _ := fieldOf(del.Doc, "batchSize").(int32)
	out.Cost = lifecycle.ExpiryCost(n, idx, int(batch))
	return &out, nil
}

func fieldOf(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
