package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestPlanJSONValues: a plan's commands are JSON values, not strings
// holding JSON (a report's ids too: pkg/report's TestReportJSONValues).
func TestPlanJSONValues(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, samples(t))
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Migrations []struct{ Commands []struct{ Command any } }
	}
	b, _ := json.Marshal(p)
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	cmd, ok := plan.Migrations[0].Commands[0].Command.(map[string]any)
	if !ok || cmd["collMod"] != "users" {
		t.Errorf("plan command = %#v, want the command document\n%s", plan.Migrations[0].Commands[0].Command, b)
	}
}

// TestServerInternalsStayOut: what FerretDB says when it refuses a
// validator reaches the result without its Go value dumps.
func TestServerInternalsStayOut(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	applied, err := newRunner(t, db, samples(t)).Up(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, a := range applied.Applied {
		for _, c := range a.Commands {
			if c.Note == "" {
				continue
			}
			notes++
			if strings.Contains(c.Note, "&{") || strings.Contains(c.Note, "0x") || !strings.Contains(c.Note, "not implemented") {
				t.Errorf("note = %q", c.Note)
			}
		}
	}
	if notes == 0 {
		t.Fatal("no command note: the sandbox accepted the validators?")
	}
}
