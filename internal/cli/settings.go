package cli

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/runner"
)

// settingsLine is a plan's effective level and action of one collection
// ("users: validationLevel moderate, inherited from 0003; validationAction error").
func settingsLine(s runner.EffectiveSettings) string {
	return fmt.Sprintf("%s: validationLevel %s; validationAction %s", s.Collection,
		runner.SettingText(s.Level, s.LevelFrom, s.LevelSource), runner.SettingText(s.Action, s.ActionFrom, s.ActionSource))
}
