// Package lifecycleplan builds the commands that apply a migration's
// collection lifecycle (docs/lifecycle.md) and bring the time-bucketed
// families to their declared state, from what the server holds:
// internal/lifecycle decides (options, index changes, views, refusals,
// a family's members), this package reads what it decides on
// (listCollections, listIndexes, the documents an index build or an
// expiry must touch) and builds the command documents (internal/cmddoc),
// each with the features it needs (Command.Features) or the reason the
// server cannot carry it out (Command.Refused). It sends nothing: the
// runner refuses a plan with a refused command before sending anything,
// and sends the rest under the migration lock. The same reading gives
// status the lifecycle the server holds and the collections no file
// declares (status.go).
package lifecycleplan

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Planner plans against one database and the migrations loaded for it.
type Planner struct {
	DB         *mongo.Database
	Migrations []*migration.Migration
	// Expiry is the deletion of the backlog idx would expire at once on
	// coll, counted now (nil: none; internal/expiry's Job.Command).
	Expiry func(ctx context.Context, version int64, coll string, idx migration.Index) (*cmddoc.Command, error)
	// Settings are the server's validation settings (probed once, or
	// given); Versioned says whether some migration upgrades coll's
	// documents (constraint needs a window that closes).
	Settings  func(ctx context.Context) (*probe.ValidationSettings, error)
	Versioned func(coll string) bool
	// Simulated, when set, is what the migrations planned before by this
	// Planner leave (simulated.go): a dry run plans every pending
	// migration before it sends anything, so each is planned over what
	// those before it will have created, changed or dropped. nil: the
	// server's state alone (up, which sends a migration before it plans
	// the next).
	Simulated *Simulated
}

// Commands are the commands that apply m: each collection's create with
// its options first (so that its validator follows as a collMod), then
// cmddoc.Up's, then the index rebuilds and changes, the expired backlogs
// before the TTL indexes that would delete them, and the views last (they
// may read a collection created above). exists are the collections the
// database has (updated for those m creates); validator is the one to
// send for a collection.
// A validationLevel constraint is sent as strict ([StrictForConstraint]):
// the level is raised only when the window closes.
func (p *Planner) Commands(ctx context.Context, m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]cmddoc.Command, error) {
	cmds, err := p.commands(ctx, m, exists, validator)
	return StrictForConstraint(cmds), err
}

func (p *Planner) commands(ctx context.Context, m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]cmddoc.Command, error) {
	if !lifecycle.Has(m) {
		cmds, err := cmddoc.Up(m, exists, validator)
		if err != nil || p.Simulated == nil {
			return cmds, err
		}
		return cmds, (&migrationPlan{p: p, m: m}).record(ctx)
	}
	srv, err := p.ServerCollections(ctx)
	if err != nil {
		return nil, err
	}
	pl := &migrationPlan{p: p, m: m, srv: srv, exists: exists}
	cmds, err := pl.commands(ctx, validator)
	if err != nil {
		return nil, err
	}
	return cmds, pl.record(ctx)
}

func (pl *migrationPlan) commands(ctx context.Context, validator func(coll string) (bson.D, error)) ([]cmddoc.Command, error) {
	m, exists := pl.m, pl.exists
	var cmds []cmddoc.Command
	for _, c := range m.Collections {
		if c.Options != nil {
			cmds = append(cmds, pl.optionCommands(c)...)
		}
	}
	up, err := cmddoc.Up(m, exists, validator)
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

// Refusals are the commands of migration m (version, file) that are
// Refused or need a feature the server lacks, each named with its file
// position; caps gives the server's lifecycle features (probed the first
// time a command needs one).
func Refusals(m *migration.Migration, version int64, file string, cmds []cmddoc.Command, caps func() (*probe.LifecycleSupport, error)) ([]lifecycle.Refusal, error) {
	var out []lifecycle.Refusal
	for _, c := range cmds {
		reason, err := lifecycle.Reason(c.Refused, c.Features, caps)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			out = append(out, lifecycle.Refusal{Version: version, File: file, Pos: lifecycle.Pos(m, c.Collection, c.Index), Collection: c.Collection, Command: cmddoc.Describe(c), Reason: reason})
		}
	}
	return out, nil
}

// ServerColl is a collection (or view) as listCollections shows it.
type ServerColl struct {
	Type    string
	Options bson.Raw
}

// ServerCollections are the database's collections and views, by name.
func (p *Planner) ServerCollections(ctx context.Context) (map[string]ServerColl, error) {
	specs, err := p.DB.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := make(map[string]ServerColl, len(specs))
	for _, s := range specs {
		out[s.Name] = ServerColl{Type: s.Type, Options: s.Options}
	}
	return out, nil
}

// migrationPlan builds one migration's lifecycle commands.
type migrationPlan struct {
	p      *Planner
	m      *migration.Migration
	srv    map[string]ServerColl
	exists map[string]bool
}

func (pl *migrationPlan) optionCommands(c *migration.Collection) []cmddoc.Command {
	o := c.Options
	if !pl.exists[c.Name] {
		pl.exists[c.Name] = true
		pl.p.Simulated.setOption(c.Name, lifecycle.HeldInFiles(o))
		cmd := cmddoc.Create(c.Name, o.Command())
		cmd.Features = lifecycle.CreateFeatures(o)
		return []cmddoc.Command{cmd}
	}
	held, onServer := pl.heldOptions(c.Name)
	if reason := lifecycle.OptionsRefused(c.Name, o, held, onServer); reason != "" {
		cmd := cmddoc.CollMod(c.Name, o.Command())
		cmd.Refused = reason
		return []cmddoc.Command{cmd}
	}
	pl.p.Simulated.setOption(c.Name, held.After(o))
	var cmds []cmddoc.Command
	for _, ch := range lifecycle.OptionChanges(o, held) {
		cmd := cmddoc.CollMod(c.Name, ch.Fields)
		cmd.Features, cmd.Refused = ch.Features, ch.Refused
		cmds = append(cmds, cmd)
	}
	return cmds
}

// heldOptions reads coll's options (internal/lifecycle's Held): as the
// earlier pending migrations of the run leave them (Simulated), else as
// the server holds them, or, for a collection an earlier pending
// migration of the same run creates, as the files declare them; onServer is false when
// the server does not have coll yet.
func (pl *migrationPlan) heldOptions(coll string) (h lifecycle.Held, onServer bool) {
	s, ok := pl.srv[coll]
	if sim, simulated := pl.p.Simulated.option(coll); simulated {
		return sim, ok // as an earlier pending migration of the run leaves them
	}
	if !ok {
		if o := migration.OptionsBefore(pl.p.Migrations, coll, pl.m.Version); o != nil {
			h = lifecycle.HeldInFiles(o)
		}
		return h, false
	}
	return lifecycle.HeldOnServer(s.Options), true
}

// StrictForConstraint sends constraint as strict in cmds' creates and
// collMods: MongoDB refuses constraint in the collMod that changes the
// validator and from any level but strict, so the level is raised only
// when the window closes (the runner's raise).
func StrictForConstraint(cmds []cmddoc.Command) []cmddoc.Command {
	for i, c := range cmds {
		if c.Name != "create" && c.Name != "collMod" {
			continue
		}
		if doc, ok := lifecycle.StrictForConstraint(c.Doc); ok {
			n := cmddoc.New(c.Collection, c.Name, c.Index, doc)
			n.Tighten, n.Features, n.Refused, n.Cost, n.Documents = c.Tighten, c.Features, c.Refused, c.Cost, c.Documents
			cmds[i] = n
		}
	}
	return cmds
}
