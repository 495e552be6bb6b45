package cli

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
)

// TestRaiseStep: up's output names the constraint steps for what they
// are, not as another closing of the window.
func TestRaiseStep(t *testing.T) {
	for _, c := range []struct {
		fields bson.D
		want   string
	}{
		{lifecycle.PrepareFields(), "prepare accounts for validationLevel constraint"},
		{lifecycle.RaiseFields(), "raise accounts to validationLevel constraint"},
		{lifecycle.LowerFields(), "clear the prepare flag of accounts"},
		{bson.D{{Key: "validator", Value: bson.D{}}}, ""},
	} {
		got := raiseStep(cmddoc.CollMod("accounts", c.fields))
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("raiseStep(%v) = %q, want %q", c.fields, got, c.want)
		}
	}
}
