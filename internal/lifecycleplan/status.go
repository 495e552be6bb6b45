package lifecycleplan

// What status shows of each collection's lifecycle (docs/cli.md, status):
// the views the applied migrations declare with what they read, capped
// collections with their limits, the TTL and hidden indexes as the server
// holds them, and the validationLevel the server holds where the files ask
// for constraint (or the server holds it, or is prepared for it). Read
// from listCollections and listIndexes, as a plan reads them; status only
// reads.

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
)

// CollectionLifecycle is one collection's (or view's) lifecycle state as
// the server holds it.
type CollectionLifecycle struct {
	Name string `json:"name"`
	// Type is listCollections' type (collection, view, timeseries); ""
	// when the server does not have it.
	Type     string        `json:"type"`
	ViewOn   string        `json:"viewOn,omitempty"`
	Pipeline bsonx.ExtJSON `json:"pipeline,omitempty"`
	// Capped, with the size (bytes) and max (documents, 0: none) held.
	Capped bool  `json:"capped,omitempty"`
	Size   int64 `json:"size,omitempty"`
	Max    int64 `json:"max,omitempty"`
	// ValidationLevel is the level the server holds (constraint
	// included), shown where the files declare constraint or the server
	// holds it; Prepared: prepareConstraintValidationLevel is set.
	ValidationLevel string `json:"validationLevel,omitempty"`
	Prepared        bool   `json:"prepareConstraintValidationLevel,omitempty"`
	// DeclaredConstraint: the applied migrations ask for constraint (held
	// strict until the validator window closes).
	DeclaredConstraint bool `json:"declaredConstraint,omitempty"`
	// Indexes are the TTL and hidden indexes the server holds.
	Indexes []LifecycleIndex `json:"indexes,omitempty"`
}

// LifecycleIndex is a TTL or hidden index as listIndexes shows it.
type LifecycleIndex struct {
	Name               string `json:"name"`
	ExpireAfterSeconds *int64 `json:"expireAfterSeconds,omitempty"`
	Hidden             bool   `json:"hidden,omitempty"`
}

// lifecycleNames are the collections and views the migrations up to
// current declare something of the lifecycle for, in order of first
// declaration: views, options, TTL or hidden indexes, index changes and
// rebuilds, validationLevel constraint.
func lifecycleNames(ms []*migration.Migration, current int64) []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, m := range ms {
		if m.Version > current {
			break
		}
		for _, v := range m.Views {
			add(v.Name)
		}
		for _, c := range m.Collections {
			if c.Options != nil || len(c.Indexes.Change) > 0 || len(c.Indexes.Rebuild) > 0 || c.ValidationLevel == migration.LevelConstraint {
				add(c.Name)
			}
			for _, idx := range c.Indexes.Create {
				if idx.ExpireAfterSeconds != nil || idx.Hidden {
					add(c.Name)
				}
			}
		}
	}
	return out
}

// Lifecycle is the lifecycle state of the collections the applied
// migrations (up to current) declare one for.
func (p *Planner) Lifecycle(ctx context.Context, current int64) ([]CollectionLifecycle, error) {
	names := lifecycleNames(p.Migrations, current)
	if len(names) == 0 {
		return nil, nil
	}
	srv, err := p.ServerCollections(ctx)
	if err != nil {
		return nil, err
	}
	var out []CollectionLifecycle
	for _, name := range names {
		s, ok := srv[name]
		cl := CollectionLifecycle{Name: name, DeclaredConstraint: lifecycle.ConstraintAt(p.Migrations, name, current)}
		if !ok {
			out = append(out, cl)
			continue
		}
		cl.Type = s.Type
		if err := p.fillLifecycle(ctx, &cl, s); err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}

func (p *Planner) fillLifecycle(ctx context.Context, cl *CollectionLifecycle, s ServerColl) error {
	if s.Type == "view" {
		cl.ViewOn, _ = s.Options.Lookup("viewOn").StringValueOK()
		if pl, err := s.Options.LookupErr("pipeline"); err == nil {
			if b, err := bson.MarshalExtJSON(bson.D{{Key: "p", Value: pl}}, false, false); err == nil {
				cl.Pipeline = bsonx.ExtJSON(b[len(`{"p":`) : len(b)-1])
			}
		}
		return nil
	}
	h := lifecycle.HeldOnServer(s.Options)
	cl.Capped, cl.Size, cl.Max = h.Capped, h.Size, h.Max
	if cl.DeclaredConstraint || lifecycle.HeldAtConstraint(s.Options) {
		cl.ValidationLevel = bsonx.OrDefault(lookupString(s.Options, "validationLevel"), "strict")
		cl.Prepared, _ = s.Options.Lookup("prepareConstraintValidationLevel").BooleanOK()
	}
	cur, err := p.DB.Collection(cl.Name).Indexes().List(ctx)
	if err != nil {
		return fmt.Errorf("list the indexes of %s: %w", cl.Name, err)
	}
	var all []bson.Raw
	if err := cur.All(ctx, &all); err != nil {
		return fmt.Errorf("list the indexes of %s: %w", cl.Name, err)
	}
	for _, idx := range all {
		li := LifecycleIndex{}
		li.Name, _ = idx.Lookup("name").StringValueOK()
		if n, ok := lifecycle.RawInt(idx, "expireAfterSeconds"); ok {
			li.ExpireAfterSeconds = &n
		}
		li.Hidden, _ = idx.Lookup("hidden").BooleanOK()
		if li.ExpireAfterSeconds != nil || li.Hidden {
			cl.Indexes = append(cl.Indexes, li)
		}
	}
	return nil
}

func lookupString(doc bson.Raw, key string) string {
	if doc == nil {
		return ""
	}
	s, _ := doc.Lookup(key).StringValueOK()
	return s
}

// Undeclared lists the database's collections no migration file declares
// (under collections:, or as a run-once operation's collection), other
// than mongomig's own (mongomig_*, and own: the ledger and lock
// collections whatever their configured names), the server's (system.*),
// and the members of the families the files declare.
func (p *Planner) Undeclared(ctx context.Context, own []string) ([]lifecycle.UndeclaredCollection, error) {
	specs, err := p.DB.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	listed := make([]lifecycle.Listed, len(specs))
	for i, sp := range specs {
		listed[i] = lifecycle.Listed{Name: sp.Name, Type: sp.Type}
	}
	return lifecycle.Undeclared(p.Migrations, own, listed), nil
}
