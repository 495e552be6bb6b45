package enforce

import (
	"errors"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// enumRefused is a server that accepts enum in a validator and does not
// enforce it (the second test server does so, pkg/probe's keywords test).
var enumRefused = &probe.Capabilities{Keywords: probe.KeywordSupport{Known: true, Unsupported: []string{"enum"}}}

func schema(kw string) bson.D {
	return bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "s", Value: bson.D{{Key: kw, Value: bson.A{"a"}}}}}}}}}
}

// TestCheckerRefusesAndReplaces: a validator with a keyword the server
// does not enforce is refused, naming its file position, unless its
// collection is asked client-side only, where a create is replaced by one
// without validator and a collMod by validator {} (with a plan note); the
// capabilities are asked only when a command sends a validator.
func TestCheckerRefusesAndReplaces(t *testing.T) {
	asked := 0
	ms := []*migration.Migration{{Version: 2, File: "0002_x.yaml", Collections: []*migration.Collection{{Name: "users", Pos: migration.Pos{Line: 3, Column: 3}}, {Name: "posts"}}}}
	c := &Checker{Migrations: ms, AskedClientSide: []string{"posts"}, Caps: func() (*probe.Capabilities, error) { asked++; return enumRefused, nil }}
	if out, err := c.Refused(2, "0002_x.yaml", []cmddoc.Command{cmddoc.DropIndex("users", "a_1")}); err != nil || out != nil || asked != 0 {
		t.Fatalf("no validator sent: refused %v, %v, probed %d times; want none, not probed", out, err, asked)
	}
	cmds := []cmddoc.Command{
		cmddoc.CollMod("users", bson.D{{Key: "validator", Value: schema("enum")}}),
		cmddoc.Create("posts", bson.D{{Key: "validator", Value: schema("enum")}}),
		cmddoc.CollMod("posts", bson.D{{Key: "validator", Value: schema("enum")}}),
		cmddoc.CollMod("users", bson.D{{Key: "validator", Value: schema("required")}}),
	}
	out, err := c.Refused(2, "0002_x.yaml", cmds)
	want := []probe.UnenforceableValidator{{Collection: "users", Version: 2, File: "0002_x.yaml", Pos: migration.Pos{Line: 3, Column: 3}, Keywords: []string{"enum"}}}
	if err != nil || !reflect.DeepEqual(out, want) {
		t.Fatalf("refused = %+v, %v; want %+v", out, err, want)
	}
	notes, err := c.Replace("0002_x.yaml", cmds)
	if err != nil || len(notes) != 2 {
		t.Fatalf("replace: %d notes, %v; want 2", len(notes), err)
	}
	if got := cmds[1].Doc; !reflect.DeepEqual(got, bson.D{{Key: "create", Value: "posts"}}) {
		t.Errorf("create posts replaced by %v, want a create without validator", got)
	}
	if got := cmds[2].Doc; !reflect.DeepEqual(got, bson.D{{Key: "collMod", Value: "posts"}, {Key: "validator", Value: bson.D{}}}) {
		t.Errorf("collMod posts replaced by %v, want validator {}", got)
	}
	if cmds[0].Doc[1].Key != "validator" || cmds[3].Doc[1].Key != "validator" {
		t.Errorf("users' commands changed: %v, %v", cmds[0].Doc, cmds[3].Doc)
	}
	probeErr := errors.New("probe failed")
	c.Caps = func() (*probe.Capabilities, error) { return nil, probeErr }
	if _, err := c.Refused(2, "0002_x.yaml", cmds[:1]); !errors.Is(err, probeErr) {
		t.Errorf("a failed probe: %v, want it returned", err)
	}
}
