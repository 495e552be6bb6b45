package runner

// Never deploy a validator the server cannot enforce (internal/enforce
// decides, and says why): a validator that uses a keyword the server was
// probed not to enforce stops up (or its plan) with an
// [*UnenforceableError] before anything is sent, unless its collection
// was named in [WithClientSideValidators]: the server is then given no
// validator for it and the ledger records it as client-side only.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/enforce"
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
	return r.caps.get(func() (*probe.Capabilities, error) {
		caps, err := probe.ValidatorSupport(ctx, r.db)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errProbe, err)
		}
		return caps, nil
	})
}

// enforcer decides against the server's capabilities (probed once, when
// a command first sends a validator).
func (r *Runner) enforcer(ctx context.Context) *enforce.Checker {
	return &enforce.Checker{Migrations: r.migrations, AskedClientSide: r.cfg.clientSide, Caps: func() (*probe.Capabilities, error) { return r.capabilities(ctx) }}
}

// checkEnforceable refuses, with an [*UnenforceableError], the commands of
// planned (and tighten) that send a validator the server does not enforce,
// but those of collections asked to be client-side only. It probes the
// server only when some command sends a validator.
func (r *Runner) checkEnforceable(ctx context.Context, planned []PlannedMigration, tighten []Command) error {
	e := r.enforcer(ctx)
	var refused []UnenforceableValidator
	for _, m := range slices.Concat(planned, []PlannedMigration{{File: "validator window", Commands: tighten}}) {
		out, err := e.Refused(m.Version, m.File, m.Commands)
		if err != nil {
			return err
		}
		refused = append(refused, out...)
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

// asClientSide is what is sent instead of c for a collection asked to be
// client-side only whose validator the server does not enforce
// ([enforce.Checker.ClientSide]); ok false: c is sent as it is.
func (r *Runner) asClientSide(ctx context.Context, c Command) (Command, bool, error) {
	return r.enforcer(ctx).ClientSide(c)
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
	e := r.enforcer(ctx)
	for _, m := range slices.Concat(p.Migrations, []PlannedMigration{{File: "validator window", Commands: p.Tighten}}) {
		notes, err := e.Replace(m.File, m.Commands)
		p.Notes = append(p.Notes, notes...)
		if err != nil {
			return err
		}
	}
	return nil
}
