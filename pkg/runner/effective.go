package runner

// The effective validationLevel and validationAction: internal/serverstate
// computes them (settings.go there says where they come from); status and
// plan show them.

import (
	"context"

	"github.com/mongomig/mongomig/internal/serverstate"
)

// Sources of an effective setting.
const (
	// SettingDeclared: the migration itself declares it.
	SettingDeclared = serverstate.SettingDeclared
	// SettingInherited: an earlier migration declared it; this one omits
	// it, so the collection keeps it.
	SettingInherited = serverstate.SettingInherited
	// SettingServer: no migration declares it; the collection keeps what
	// the server holds.
	SettingServer = serverstate.SettingServer
	// SettingDefault: no migration declares it and the collection is new:
	// MongoDB's default (strict, error).
	SettingDefault = serverstate.SettingDefault
)

// EffectiveSettings are the validationLevel and validationAction a
// collection has once a migration that sends its validator is applied.
type EffectiveSettings = serverstate.EffectiveSettings

// SettingText words one effective setting ("moderate, inherited from
// 0003").
func SettingText(value string, from int64, source string) string {
	return serverstate.SettingText(value, from, source)
}

// planSettings puts in p the effective level and action of every
// collection whose validator a planned migration sends.
func (r *Runner) planSettings(ctx context.Context, p *Plan) error {
	var held map[string]serverstate.Collection
	created := map[string]bool{}
	for _, m := range p.Migrations {
		for _, c := range m.Commands {
			if _, ok := sentValidator(c); !ok {
				continue
			}
			if held == nil {
				var err error
				if held, err = r.heldAll(ctx); err != nil {
					return err
				}
			}
			if c.Name == "create" {
				created[c.Collection] = true
			}
			p.Settings = append(p.Settings, r.settingsAt(m.Version, c.Collection, held[c.Collection], created[c.Collection]))
		}
	}
	return nil
}

func (r *Runner) settingsAt(v int64, coll string, h serverstate.Collection, created bool) EffectiveSettings {
	return serverstate.SettingsAt(r.migrations, v, coll, h, created)
}
