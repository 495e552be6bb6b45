package lifecycleplan

// Time-bucketed families (the buckets: key of the files, pkg/buckets for
// the names): internal/lifecycle decides the members a family's
// declaration wants as of a time (only names the family's pattern
// produces are members, so no other collection is ever dropped); this
// file reads the server and builds the commands that get there; the
// runner sends them under the migration lock.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// BucketRun is what a run of the families did (or, in a dry run, would do).
type BucketRun struct {
	// At is the time the families were brought to.
	At time.Time `json:"at"`
	// Families are the declared families with their members.
	Families []lifecycle.FamilyMembers `json:"families"`
	// Commands are the commands sent (a dry run: planned, Outcome empty),
	// in order: per family, the drops, then the changes of the members
	// kept, then the creates.
	Commands []cmddoc.CommandResult `json:"commands"`
	// ClientSide lists members whose validator the server does not
	// enforce: they are created without it.
	ClientSide []string `json:"clientSideValidators,omitempty"`
}

// Buckets is the run that brings the families declared by the migrations
// applied says are applied to their state as of at (zero: the server's
// clock, so that every process agrees on the current period); nil when
// they declare none (nothing is read). caps gives the server's validator
// capabilities, asked only for a family with a validator: members are
// created without a validator the server does not enforce. With caps nil
// (status, which only reads) they are not probed, so the commands may
// send a validator the server does not enforce.
func (p *Planner) Buckets(ctx context.Context, at time.Time, applied func(int64) bool, caps func() (*probe.Capabilities, error)) (*BucketRun, error) {
	fams := migration.Families(p.Migrations, applied)
	if len(fams) == 0 {
		return nil, nil
	}
	if at.IsZero() {
		var err error
		if at, err = lease.ServerTime(ctx, p.DB); err != nil {
			return nil, fmt.Errorf("buckets: read the server's clock: %w", err)
		}
	}
	server, err := serverstate.Options(ctx, p.DB, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read back validators (listCollections): %w", err)
	}
	run := &BucketRun{At: at.UTC(), Families: []lifecycle.FamilyMembers{}, Commands: []cmddoc.CommandResult{}}
	for _, f := range fams {
		if err := p.planFamily(ctx, run, f, server, caps); err != nil {
			return nil, err
		}
	}
	return run, nil
}

func (p *Planner) planFamily(ctx context.Context, run *BucketRun, f migration.FamilyState, server map[string]serverstate.Collection, caps func() (*probe.Capabilities, error)) error {
	fm := lifecycle.Family(f, slices.Collect(maps.Keys(server)), run.At)
	validator, clientSide := f.Validator, false
	if caps != nil && f.Validator != nil {
		c, err := caps()
		if err != nil {
			return err
		}
		validator, clientSide = lifecycle.FamilyValidator(f, c)
	}
	d := lifecycle.FamilyDeclared(f, validator)
	var cmds []cmddoc.Command
	for _, name := range fm.Drop {
		cmds = append(cmds, cmddoc.New(name, "drop", "", bson.D{{Key: "drop", Value: name}}))
	}
	for _, name := range fm.Kept() {
		held, err := serverstate.Read(ctx, p.DB, []string{name})
		if err != nil {
			return err
		}
		d.Name = name
		_, fixes := serverstate.Compare(d, held[name])
		cmds = append(cmds, cmddoc.Fixes(name, fixes)...)
	}
	for _, name := range fm.Create {
		if clientSide {
			run.ClientSide = append(run.ClientSide, name)
		}
		cmds = append(cmds, cmddoc.Create(name, cmddoc.ValidatorFields(validator, lifecycle.LevelOf(validator, f.Level), lifecycle.ActionOf(validator, f.Action))))
		for _, idx := range slices.Sorted(maps.Keys(f.Indexes)) {
			cmds = append(cmds, cmddoc.CreateIndex(name, f.Indexes[idx]))
		}
	}
	for _, c := range cmds {
		run.Commands = append(run.Commands, cmddoc.CommandResult{Command: c})
	}
	run.Families = append(run.Families, fm)
	return nil
}
