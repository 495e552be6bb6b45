package cmddoc

import (
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestUpAndDownCommands: an upgrade without a validator in force still
// sends its index changes (pkg/runner's
// TestUpgradeWithoutValidatorCreatesItsIndexes runs them), and down
// recreates a dropped index from the earlier migration that created it.
func TestUpAndDownCommands(t *testing.T) {
	ms, err := migration.Load(fstest.MapFS{
		"0001_people.yaml": {Data: []byte("collections:\n  people:\n    indexes:\n      create:\n        - {keys: {name: 1}}\n")},
		"0002_handle.yaml": {Data: []byte("collections:\n  people:\n    upgrade:\n      - default: {handle: none}\n    indexes:\n      drop:\n        - name_1\n      create:\n        - {keys: {handle: 1}}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) (bson.D, error) { return nil, nil }
	up, err := Up(ms[1], map[string]bool{"people": true}, none)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(up); got != "dropIndexes:name_1 createIndexes:handle_1" {
		t.Errorf("up sends %q", got)
	}
	down, unknown := Down(ms, ms[1], map[string]bool{"people": true}, func(string, int64) bson.D { return nil })
	if got := names(down); got != "dropIndexes:handle_1 createIndexes:name_1" || len(unknown) != 0 {
		t.Errorf("down sends %q (unknown %v)", got, unknown)
	}
	if _, unknown := Down(ms[1:], ms[1], map[string]bool{"people": true}, func(string, int64) bson.D { return nil }); strings.Join(unknown, ",") != "people.name_1" {
		t.Errorf("an index no earlier file created: unknown %v; want people.name_1", unknown)
	}
}

func names(cmds []Command) string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name+":"+c.Index)
	}
	return strings.Join(out, " ")
}
