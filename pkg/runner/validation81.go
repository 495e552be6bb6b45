package runner

// MongoDB 8.1's validationAction errorAndLog and 9.0's validationLevel
// constraint: internal/lifecycle decides which declared settings the
// server lacks; the runner probes the server (only when one is declared)
// and refuses at plan time, before anything is sent.

import (
	"context"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

type (
	// UnsupportedSetting is one validation setting a pending migration
	// declares that the server (or this mongomig) cannot apply.
	UnsupportedSetting = lifecycle.UnsupportedSetting
	// UnsupportedSettingError is up (or its plan) refusing, before sending
	// anything, settings the server does not have.
	UnsupportedSettingError = lifecycle.UnsupportedSettingError
)

// refuseSettings refuses the errorAndLog and constraint settings of
// pending (collections and bucket families) the server lacks; it probes
// only when one is declared.
func (r *Runner) refuseSettings(ctx context.Context, pending []*migration.Migration) error {
	out, err := lifecycle.UnsupportedSettings(pending, func() (*probe.ValidationSettings, error) {
		vs, err := r.validationSettings(ctx)
		if err != nil {
			return nil, err
		}
		return vs, nil
	}, func(coll string) bool { return r.registry.Current(coll) > 0 })
	if err != nil {
		return err
	}
	if len(out) > 0 {
		return &UnsupportedSettingError{Settings: out}
	}
	return nil
}
