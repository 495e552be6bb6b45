package lifecycle

// MongoDB 8.1's validationAction errorAndLog and 9.0's validationLevel
// constraint: refused at plan time, before anything is sent, where a
// probe (pkg/probe, ProbeValidationSettings) finds the server without
// them. constraint is refused everywhere for now: MongoDB sets it only on
// a strict collection after a collMod with prepareConstraintValidationLevel
// true, refuses a validator change while it is set, and scans the
// collection for an invalid document when it is set
// (checkValidationOptionsCanBeUsed,
// src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp);
// up does not send that sequence yet, so it refuses rather than send a
// collMod the server would refuse half-way.

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
}

// UnsupportedSettings are the errorAndLog and constraint settings of
// pending (collections and bucket families) the server lacks. settings
// is called (the runner probes the server) only when one is declared.
func UnsupportedSettings(pending []*migration.Migration, settings func() (*probe.ValidationSettings, error)) ([]UnsupportedSetting, error) {
	var ds []settingDecl
	for _, m := range pending {
		for _, c := range m.Collections {
			base := "/collections/" + escape(c.Name)
			ds = append(ds, settingDecl{m, c.Name, c.Pos, c.ValidationLevel, c.ValidationAction, base + "/validationLevel", base + "/validationAction"})
		}
		for _, b := range m.Buckets {
			base := "/buckets/" + escape(b.Pattern)
			ds = append(ds, settingDecl{m, b.Pattern, b.Pos, b.ValidationLevel, b.ValidationAction, base + "/validationLevel", base + "/validationAction"})
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
			reason := "this mongomig does not yet send the sequence MongoDB requires to set it (prepareConstraintValidationLevel, then constraint from strict); use strict"
			if !vs.Constraint.Available {
				reason = "the server does not have it (MongoDB 9.0 added it): " + vs.Constraint.Reason + "; use strict"
			}
			out = append(out, UnsupportedSetting{File: d.m.File, Pos: d.m.Position(d.levelPtr), Collection: d.name, Key: "validationLevel", Value: "constraint", Reason: reason})
		}
	}
	return out, nil
}

func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }
