package serverstate

// The effective validationLevel and validationAction. A migration that
// omits them sends neither, and collMod changes only what it is given
// (MongoDB: src/mongo/db/catalog/coll_mod.cpp sets each option present in
// the command and leaves the others), so the collection keeps its
// current setting: the one the last migration that declared it gave, or,
// when none did, what the server held (MongoDB's default, strict and
// error, for a collection created with a validator: create takes the
// defaults of CollectionOptions, src/mongo/db/catalog/collection_options.h).

import (
	"fmt"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Sources of an effective setting.
const (
	// SettingDeclared: the migration itself declares it.
	SettingDeclared = "declared"
	// SettingInherited: an earlier migration declared it; this one omits
	// it, so the collection keeps it.
	SettingInherited = "inherited"
	// SettingServer: no migration declares it; the collection keeps what
	// the server holds.
	SettingServer = "server"
	// SettingDefault: no migration declares it and the collection is new:
	// MongoDB's default (strict, error).
	SettingDefault = "default"
)

// EffectiveSettings are the validationLevel and validationAction a
// collection has once migration Version, which sends its validator, is
// applied: LevelFrom and ActionFrom are the migrations that declared them
// (0: none), the sources say why (the Setting constants).
type EffectiveSettings struct {
	Version      int64  `json:"version"`
	Collection   string `json:"collection"`
	Level        string `json:"validationLevel"`
	LevelFrom    int64  `json:"validationLevelFrom,omitempty"`
	LevelSource  string `json:"validationLevelSource"`
	Action       string `json:"validationAction"`
	ActionFrom   int64  `json:"validationActionFrom,omitempty"`
	ActionSource string `json:"validationActionSource"`
}

// DeclaredSettings returns the level and action the migrations of ms up
// to at (those applied says are applied; nil: all) declare for coll, with
// the migrations that declared them (0: none).
func DeclaredSettings(ms []*migration.Migration, coll string, at int64, applied func(version int64) bool) (level string, levelFrom int64, action string, actionFrom int64) {
	for _, m := range ms {
		if m.Version > at {
			break
		}
		if applied != nil && !applied(m.Version) {
			continue
		}
		c := m.Collection(coll)
		if c == nil {
			continue
		}
		if c.ValidationLevel != "" {
			level, levelFrom = string(c.ValidationLevel), m.Version
		}
		if c.ValidationAction != "" {
			action, actionFrom = string(c.ValidationAction), m.Version
		}
	}
	return level, levelFrom, action, actionFrom
}

// SettingsAt are the effective settings of coll once migration v of ms,
// which sends its validator, is applied on a server holding h (created:
// v's run creates the collection).
func SettingsAt(ms []*migration.Migration, v int64, coll string, h Collection, created bool) EffectiveSettings {
	s := EffectiveSettings{Version: v, Collection: coll}
	s.Level, s.LevelFrom, s.Action, s.ActionFrom = DeclaredSettings(ms, coll, v, nil)
	source := func(from int64, value *string, server, def string) string {
		switch {
		case from == v:
			return SettingDeclared
		case from != 0:
			return SettingInherited
		case h.Exists && !created:
			*value = bsonx.OrDefault(server, def)
			return SettingServer
		}
		*value = def
		return SettingDefault
	}
	s.LevelSource = source(s.LevelFrom, &s.Level, h.Level, "strict")
	s.ActionSource = source(s.ActionFrom, &s.Action, h.Action, "error")
	return s
}

// SettingText words one effective setting ("moderate, inherited from
// 0003").
func SettingText(value string, from int64, source string) string {
	switch source {
	case SettingDeclared:
		return value
	case SettingInherited:
		return fmt.Sprintf("%s, inherited from %04d", value, from)
	case SettingServer:
		return value + ", kept from the server (no migration declares it)"
	}
	return value + ", MongoDB's default (no migration declares it)"
}
