package version

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/migration"
)

// CheckReservedFields returns a [migration.ErrorList] naming, at its
// file:line:column, every declarative upgrade or downgrade step that
// reads, writes or removes a field mongomig maintains itself: the version
// field (DefaultField, or the name given with [WithField] in opts) and
// [MarkerField], or a path inside either. Such a step would be overwritten
// by the stamp (`set: {version: 7}` is stamped 2 anyway), would forge a
// backfill marker (`rename: {text: _mongomig_step}`), or would make the
// document's version disagree with what was applied to it. It returns nil
// when no step does, and the error of an invalid option. [FromMigrations]
// refuses such migrations with the same list; lint reports it.
func CheckReservedFields(ms []*migration.Migration, opts ...Option) error {
	cfg := config{field: DefaultField, funcs: map[string]Func{}}
	for _, o := range opts {
		if err := o.apply(&cfg); err != nil {
			return err
		}
	}
	if list := reservedFieldErrors(ms, cfg.field); len(list) > 0 {
		return list
	}
	return nil
}

func reservedFieldErrors(ms []*migration.Migration, field string) migration.ErrorList {
	var list migration.ErrorList
	for _, m := range ms {
		for _, c := range m.Collections {
			list = append(list, reservedInSteps(m.File, "an upgrade", c.Upgrade, field)...)
			list = append(list, reservedInSteps(m.File, "a downgrade", c.Downgrade, field)...)
		}
	}
	list.Sort()
	return list
}

// reservedInSteps checks the paths each step reads, writes or removes.
func reservedInSteps(file, what string, steps []migration.Step, field string) []*migration.Error {
	var out []*migration.Error
	for _, s := range steps {
		for _, f := range s.Fields {
			pos := f.Pos
			if !pos.IsValid() {
				pos = s.Pos
			}
			for _, use := range pathUses(s.Op, f) {
				role, hint := reservedRole(use.path, field)
				if role == "" {
					continue
				}
				out = append(out, &migration.Error{File: file, Pos: pos, Hint: hint,
					Msg: fmt.Sprintf("%s cannot %s %q: %s", what, use.verb, use.path, role)})
			}
		}
	}
	return out
}

type pathUse struct{ verb, path string }

// pathUses lists the paths one operand of a step touches, and how.
func pathUses(op migration.Op, f migration.Field) []pathUse {
	switch op {
	case migration.OpUnset:
		return []pathUse{{"remove", f.Path}}
	case migration.OpRename:
		return []pathUse{{"remove", f.Path}, {"write", f.To}}
	case migration.OpCopy:
		return []pathUse{{"read", f.Path}, {"write", f.To}}
	}
	return []pathUse{{"write", f.Path}} // set, default
}

// reservedRole says whose field path is, with a hint, or "" when it is
// the application's.
func reservedRole(path, field string) (role, hint string) {
	switch {
	case path == field || isUnder(path, field):
		return fmt.Sprintf("%q is the version field, which mongomig stamps", field),
			fmt.Sprintf("remove the step: mongomig sets %q itself after the last step", field)
	case path == MarkerField || isUnder(path, MarkerField):
		return fmt.Sprintf("%q is the backfill's progress marker", MarkerField),
			fmt.Sprintf("use another field name: mongomig writes and removes %q itself", MarkerField)
	}
	return "", ""
}

// isUnder reports whether path lies inside the top-level field name.
func isUnder(path, name string) bool {
	return len(path) > len(name) && path[:len(name)] == name && path[len(name)] == '.'
}
