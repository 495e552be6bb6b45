package runner

// Never deploy a validator the server cannot enforce. Some servers
// (DocumentDB, FerretDB 2, Amazon DocumentDB) accept a validator that uses
// a $jsonSchema keyword they do not implement and then refuse every write
// to the collection, where MongoDB refuses the validator at once. Before
// up (or its plan) sends anything, every validator it would send is
// checked against the keywords the server was probed to enforce
// (probe.ValidatorSupport, in a scratch database): one that uses a refused
// keyword stops the run with an [*UnenforceableError], unless its
// collection was named in [WithClientSideValidators], in which case the
// server is given no validator for it and the ledger records it as
// client-side only.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// WithClientSideValidators names collections whose validators the server
// cannot enforce are applied client-side only: for such a validator up
// sends the collection and its indexes but no validator (and removes one
// the server holds), and records the collection in the ledger as
// client-side (LedgerEntry.ClientSideValidators). It is the way to deploy
// a validator [UnenforceableError] refuses; one the server enforces is
// sent as usual.
func WithClientSideValidators(colls ...string) Option {
	return optionFunc(func(c *config) error {
		for _, n := range colls {
			if err := checkCollectionName(n); err != nil {
				return fmt.Errorf("client-side validator: %w", err)
			}
		}
		c.clientSide = append(c.clientSide, colls...)
		return nil
	})
}

// WithCapabilities gives the runner the server's capabilities (from
// [probe.Probe] or [probe.ValidatorSupport]) instead of probing them the
// first time a validator is to be sent.
func WithCapabilities(caps *probe.Capabilities) Option {
	return optionFunc(func(c *config) error {
		c.caps = caps
		return nil
	})
}

// UnenforceableValidator is one validator a migration would send that
// the server does not enforce ([probe.UnenforceableValidator]).
type UnenforceableValidator = probe.UnenforceableValidator

// UnenforceableError is up (or its plan) refusing, before sending
// anything, validators the server would accept and then not enforce
// ([probe.UnenforceableError]).
type UnenforceableError = probe.UnenforceableError

// errProbe wraps a failure to probe the server's validator capabilities
// (a network error or timeout: a refusal is a capability).
var errProbe = errors.New("probe which $jsonSchema keywords the server enforces")

// capabilities are the server's validator capabilities: those given by
// [WithCapabilities], else probed once (in a scratch database).
func (r *Runner) capabilities(ctx context.Context) (*probe.Capabilities, error) {
	if r.cfg.caps == nil {
		caps, err := probe.ValidatorSupport(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errProbe, err)
		}
		r.cfg.caps = caps
	}
	return r.cfg.caps, nil
}

func (r *Runner) clientSideAsked(coll string) bool { return slices.Contains(r.cfg.clientSide, coll) }

// checkEnforceable refuses, with an [*UnenforceableError], the commands of
// planned (and tighten) that send a validator the server does not enforce,
// but those of collections asked to be client-side only. It probes the
// server only when some command sends a validator.
func (r *Runner) checkEnforceable(ctx context.Context, planned []PlannedMigration, tighten []Command) error {
	var refused []UnenforceableValidator
	var caps *probe.Capabilities
	check := func(version int64, file string, cmds []Command) error {
		for _, c := range cmds {
			v, ok := sentValidator(c)
			if !ok || len(v) == 0 {
				continue
			}
			if caps == nil {
				var err error
				if caps, err = r.capabilities(ctx); err != nil {
					return err
				}
			}
			if kws := probe.RefusedKeywords(v, &caps.Keywords); len(kws) > 0 && !r.clientSideAsked(c.Collection) {
				uv := UnenforceableValidator{Collection: c.Collection, Version: version, File: file, Keywords: kws}
				if m := r.migrationByVersion(version); m != nil {
					if mc := m.Collection(c.Collection); mc != nil {
						uv.Pos = mc.Pos
					}
				}
				refused = append(refused, uv)
			}
		}
		return nil
	}
	for _, m := range planned {
		if err := check(m.Version, m.File, m.Commands); err != nil {
			return err
		}
	}
	if err := check(0, "validator window", tighten); err != nil {
		return err
	}
	if len(refused) > 0 {
		return &UnenforceableError{Validators: refused}
	}
	return nil
}

// preflight is up's check before it takes the lock (and so before it
// writes anything, the lock included): the plan's validators must be
// enforceable. Other problems of the plan (drift, order) are left to the
// run under the lock, which finds them again and reports them there.
func (r *Runner) preflight(ctx context.Context, to int64) error {
	_, err := r.Plan(ctx, to)
	var ue *UnenforceableError
	var le *LifecycleRefusedError
	var us *UnsupportedSettingError
	if errors.As(err, &ue) || errors.As(err, &le) || errors.Is(err, errProbe) || errors.As(err, &us) {
		return err
	}
	return nil
}

// asClientSide is what is sent instead of c when c is a create or collMod
// with a validator the server does not enforce, for a collection asked to
// be client-side only: the collection without validator (create), or the
// server's validator removed (collMod, validator {}), so that the server
// holds none rather than an older one. ok is false for other commands (a
// validator the server enforces is sent, asked or not).
func (r *Runner) asClientSide(ctx context.Context, c Command) (Command, bool, error) {
	v, ok := sentValidator(c)
	if !ok || len(v) == 0 || !r.clientSideAsked(c.Collection) {
		return Command{}, false, nil
	}
	caps, err := r.capabilities(ctx)
	if err != nil || len(probe.RefusedKeywords(v, &caps.Keywords)) == 0 {
		return Command{}, false, err
	}
	if c.Name == "create" {
		return createCommand(c.Collection, nil), true, nil
	}
	return collModCommand(c.Collection, bson.D{{Key: "validator", Value: bson.D{}}}), true, nil
}

// runClientSide sends asClientSide(c) (ok false: c is not one): the
// collection exists afterwards and the server holds no validator for it.
func (r *Runner) runClientSide(ctx context.Context, c Command) (res CommandResult, ok bool, err error) {
	sent, ok, err := r.asClientSide(ctx, c)
	if err != nil || !ok {
		return CommandResult{}, err != nil, err
	}
	note := "the server does not enforce this validator's keywords: it is applied client-side only, as asked, and the server holds none for " + c.Collection
	err = r.db.RunCommand(ctx, sent.Doc).Err()
	switch {
	case err == nil:
	case sent.Name == "create" && probe.HasCode(err, probe.CodeNamespaceExists):
		sent = collModCommand(c.Collection, bson.D{{Key: "validator", Value: bson.D{}}})
		if err = r.db.RunCommand(ctx, sent.Doc).Err(); err != nil && !probe.IsNotSupported(err) {
			return CommandResult{}, true, err
		}
	case sent.Name == "collMod" && probe.HasCode(err, probe.CodeNamespaceNotFound):
		sent = createCommand(c.Collection, nil)
		if err = r.db.RunCommand(ctx, sent.Doc).Err(); err != nil && !probe.HasCode(err, probe.CodeNamespaceExists) {
			return CommandResult{}, true, err
		}
	case probe.IsNotSupported(err):
		// A server without validators holds none already.
	default:
		return CommandResult{}, true, err
	}
	return CommandResult{Command: sent, Outcome: OutcomeClientSide, Note: note, Asked: true}, true, nil
}

// guardEnforceable is the last check before c is sent: a validator the
// server does not enforce is never sent, whatever the plan said (another
// process may have changed the ledger since).
func (r *Runner) guardEnforceable(ctx context.Context, c Command) error {
	v, ok := sentValidator(c)
	if !ok || len(v) == 0 {
		return nil
	}
	// The migration is named by the PartialError this becomes.
	return r.checkEnforceable(ctx, []PlannedMigration{{Commands: []Command{c}}}, nil)
}

// clientSideNotes puts in p what is sent instead of the validators asked
// to be client-side only, with a note for each.
func (r *Runner) clientSideNotes(ctx context.Context, p *Plan) error {
	note := func(file string, c Command) {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %s: the server does not enforce this validator's keywords: it is applied client-side only, as asked, and the server is given none (the ledger records it as client-side)", migration.DisplayName(file), c.Collection))
	}
	for i := range p.Migrations {
		m := &p.Migrations[i]
		for j, c := range m.Commands {
			sent, ok, err := r.asClientSide(ctx, c)
			if err != nil {
				return err
			}
			if ok {
				m.Commands[j] = sent
				note(m.File, c)
			}
		}
	}
	for j, c := range p.Tighten {
		sent, ok, err := r.asClientSide(ctx, c)
		if err != nil {
			return err
		}
		if ok {
			sent.Tighten = true
			p.Tighten[j] = sent
			note("validator window", c)
		}
	}
	return nil
}
