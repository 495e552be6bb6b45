package statusview

import (
	"testing"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// TestRemaining: a backfill still has to upgrade the documents below the
// current version and those whose version is not a version; nothing is
// said of an uncounted collection.
func TestRemaining(t *testing.T) {
	if n := Remaining(&CollectionStatus{Name: "users", CurrentVersion: 2}); n != nil {
		t.Fatalf("uncounted: Remaining = %d, want nil", *n)
	}
	cs := &CollectionStatus{Name: "users", CurrentVersion: 2, Documents: []bsonx.VersionCount{
		{Version: 1, Count: 3}, {Version: 2, Count: 5}, {Version: 3, Count: 7}, {Invalid: `"x"`, Count: 2},
	}}
	if n := Remaining(cs); n == nil || *n != 5 {
		t.Fatalf("Remaining = %v, want 5 (3 at version 1, 2 not a version)", n)
	}
}
