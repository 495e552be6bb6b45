package version_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestStepsMayNotTouchMongomigsFields: lint used to accept `rename: {text: _mongomig_step}` (the backfill
// then wrote a forged marker) and `set: {version: 7}` (examples showed 7,
// the backfill stamped 2). A step whose source or target is the version
// field (whatever WithField names it), the step marker, or a path inside
// either, is refused with its file:line:column and a hint, in upgrades and
// downgrades; the same names are ordinary fields when not reserved.
func TestStepsMayNotTouchMongomigsFields(t *testing.T) {
	cases := []struct {
		steps string
		opts  []version.Option
		want  string // "" when the file is fine
	}{
		{"upgrade: [{rename: {text: _mongomig_step}}]", nil, `0001_a.yaml:3:25: an upgrade cannot write "_mongomig_step"`},
		{"upgrade: [{set: {version: 7}}]", nil, `0001_a.yaml:3:22: an upgrade cannot write "version"`},
		{"upgrade: [{default: {version: 7}}]", nil, `0001_a.yaml:3:26: an upgrade cannot write "version"`},
		{"upgrade: [{unset: [version]}]", nil, `0001_a.yaml:3:24: an upgrade cannot remove "version"`},
		{"upgrade: [{rename: {version: x}}]", nil, `0001_a.yaml:3:25: an upgrade cannot remove "version"`},
		{"upgrade: [{copy: {version: x}}]", nil, `0001_a.yaml:3:23: an upgrade cannot read "version"`},
		{"upgrade: [{copy: {x: version.y}}]", nil, `0001_a.yaml:3:23: an upgrade cannot write "version.y"`},
		{"upgrade: [{set: {_mongomig_step.step: 1}}]", nil, `0001_a.yaml:3:22: an upgrade cannot write "_mongomig_step.step"`},
		{"downgrade: [{unset: [_mongomig_step]}]", nil, `0001_a.yaml:3:26: a downgrade cannot remove "_mongomig_step"`},
		{"upgrade: [{set: {_v: 1}}]", []version.Option{version.WithField("_v")}, `0001_a.yaml:3:22: an upgrade cannot write "_v"`},
		// Not reserved: another version field, a longer name, a deeper path.
		{"upgrade: [{set: {version: 7}}]", []version.Option{version.WithField("_v")}, ""},
		{"upgrade: [{rename: {versions: x, a.version: b, c: _mongomig_steps}}]", nil, ""},
	}
	for _, c := range cases {
		fsys := fstest.MapFS{"0001_a.yaml": {Data: []byte("collections:\n  users:\n    " + c.steps + "\n")}}
		_, err := version.New(fsys, c.opts...)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.steps, err)
			}
			continue
		}
		var list migration.ErrorList
		if !errors.As(err, &list) || len(list) != 1 || !strings.HasPrefix(err.Error(), c.want) || list[0].Hint == "" {
			t.Errorf("%s: got %v, want a migration.ErrorList starting %q, with a hint", c.steps, err, c.want)
		}
		ms, lerr := migration.Load(fsys)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if got := version.CheckReservedFields(ms, c.opts...); got == nil || got.Error() != err.Error() {
			t.Errorf("%s: CheckReservedFields says %v, New %v", c.steps, got, err)
		}
	}
}
