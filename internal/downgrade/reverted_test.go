package downgrade

import (
	"slices"
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestReverted: a down to version 1 reverts the upgrades of the later
// migrations only, each collection once, sorted; a collection whose
// migration upgrades nothing is not among them.
func TestReverted(t *testing.T) {
	up := []migration.Step{{}}
	ms := []*migration.Migration{
		{Version: 1, Collections: []*migration.Collection{{Name: "accounts", Upgrade: up}}},
		{Version: 2, Collections: []*migration.Collection{{Name: "users", Upgrade: up}, {Name: "logs"}}},
		{Version: 3, Collections: []*migration.Collection{{Name: "orders", Upgrade: up}, {Name: "users", Upgrade: up}}},
	}
	if got, want := Reverted(ms, 1), []string{"orders", "users"}; !slices.Equal(got, want) {
		t.Fatalf("Reverted(ms, 1) = %v, want %v", got, want)
	}
	if got := Reverted(ms, 3); got != nil {
		t.Fatalf("Reverted(ms, 3) = %v, want none", got)
	}
}
