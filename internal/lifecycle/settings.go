package lifecycle

// MongoDB 8.1's validationAction errorAndLog and 9.0's validationLevel
// constraint: refused at plan time, before anything is sent, where a
// probe (pkg/probe, ProbeValidationSettings) finds the server without
// them. Where the server has constraint, it is set when the validator
// window closes (constraint.go), so it is refused on a collection whose
// documents carry no version (no window closes there) and on a family's
// members (they have no window).

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// UnsupportedSetting is one validation setting a pending migration
// declares that the server (or this mongomig) cannot apply.
type UnsupportedSetting struct {
	File       string        `json:"file"`
	Pos        migration.Pos `json:"pos"`
	Collection string        `json:"collection"`
	Key        string        `json:"key"`
	Value      string        `json:"value"`
	Reason     string        `json:"reason"`
}

// UnsupportedSettingError is up (or its plan) refusing, before sending
// anything, settings the server does not have.
type UnsupportedSettingError struct {
	Settings []UnsupportedSetting
}

func (e *UnsupportedSettingError) Error() string {
	var lines []string
	for _, s := range e.Settings {
		lines = append(lines, fmt.Sprintf("%s:%d:%d: %s: %s %s: %s", migration.DisplayName(s.File), s.Pos.Line, s.Pos.Column, s.Collection, s.Key, s.Value, s.Reason))
	}
	return "validation settings the server cannot apply (nothing was sent): " + strings.Join(lines, "; ")
}

type settingDecl struct {
	m         *migration.Migration
	name      string
	pos       migration.Pos
	level     migration.Level
	action    migration.Action
	levelPtr  string
	actionPtr string
	family    bool
}

// UnsupportedSettings are the errorAndLog and constraint settings of
// pending (collections and bucket families) the server lacks. settings
// is called (the runner probes the server) only when one is declared;
// versioned reports whether a collection's documents carry versions (some
// migration declares an upgrade for it).
func UnsupportedSettings(pending []*migration.Migration, settings func() (*probe.ValidationSettings, error), versioned func(coll string) bool) ([]UnsupportedSetting, error) {
	var ds []settingDecl
	for _, m := range pending {
		for _, c := range m.Collections {
			base := "/collections/" + escape(c.Name)
			ds = append(ds, settingDecl{m, c.Name, c.Pos, c.ValidationLevel, c.ValidationAction, base + "/validationLevel", base + "/validationAction", false})
		}
		for _, b := range m.Buckets {
			base := "/buckets/" + escape(b.Pattern)
			ds = append(ds, settingDecl{m, b.Pattern, b.Pos, b.ValidationLevel, b.ValidationAction, base + "/validationLevel", base + "/validationAction", true})
		}
	}
	var vs *probe.ValidationSettings
	var out []UnsupportedSetting
	for _, d := range ds {
		if d.level != migration.LevelConstraint && d.action != migration.ActionErrorAndLog {
			continue
		}
		if vs == nil {
			var err error
			if vs, err = settings(); err != nil {
				return nil, err
			}
		}
		if d.action == migration.ActionErrorAndLog && !vs.ErrorAndLog.Available {
			out = append(out, UnsupportedSetting{File: d.m.File, Pos: d.m.Position(d.actionPtr), Collection: d.name, Key: "validationAction", Value: "errorAndLog",
				Reason: "the server does not have it (MongoDB 8.1 added it): " + vs.ErrorAndLog.Reason + "; use error"})
		}
		if d.level == migration.LevelConstraint {
			reason := ""
			switch {
			case !vs.Constraint.Available:
				reason = "the server does not have it (MongoDB 9.0 added it): " + vs.Constraint.Reason + "; use strict"
			case d.family:
				reason = "a family's members have no validator window, and constraint is set when one closes after a backfill's proof; use strict"
			case !versioned(d.name):
				reason = "constraint is set when the validator window closes after a backfill proved every document at the current version, and no migration declares an upgrade for " + d.name + " (no window closes); declare an upgrade, or use strict"
			}
			if reason != "" {
				out = append(out, UnsupportedSetting{File: d.m.File, Pos: d.m.Position(d.levelPtr), Collection: d.name, Key: "validationLevel", Value: "constraint", Reason: reason})
			}
		}
	}
	return out, nil
}

func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }
