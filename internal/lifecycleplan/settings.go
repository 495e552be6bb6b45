package lifecycleplan

// MongoDB 8.1's validationAction errorAndLog and 9.0's validationLevel
// constraint: internal/lifecycle decides which declared settings the
// server lacks; this file probes the server, only when one is declared.

import (
	"context"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// RefuseSettings refuses, with a [*lifecycle.UnsupportedSettingError],
// the errorAndLog and constraint settings of pending (collections and
// bucket families) the server lacks; it probes only when one is declared.
func (p *Planner) RefuseSettings(ctx context.Context, pending []*migration.Migration) error {
	out, err := lifecycle.UnsupportedSettings(pending, func() (*probe.ValidationSettings, error) {
		return p.Settings(ctx)
	}, p.Versioned)
	if err != nil {
		return err
	}
	if len(out) > 0 {
		return &lifecycle.UnsupportedSettingError{Settings: out}
	}
	return nil
}
