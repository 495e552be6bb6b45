package statusview

import (
	"testing"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// TestCountedAnomalies: documents above the current version, below it
// once the window closed, and at a version no file gives are each an
// anomaly, with their counts; those at a known version below the current
// one while the window is open are not.
func TestCountedAnomalies(t *testing.T) {
	cs := &CollectionStatus{Name: "users", CurrentVersion: 3, Window: "open", AboveCurrent: 2, Documents: []bsonx.VersionCount{
		{Version: 0, Count: 5}, {Version: 2, Count: 1}, {Version: 3, Count: 9}, {Version: 4, Count: 2}, {Invalid: `"x"`, Count: 1},
	}}
	CountedAnomalies(cs, []int64{0, 3})
	kinds := map[string]int64{}
	for _, a := range cs.Anomalies {
		kinds[a.Kind] = a.Count
	}
	if len(kinds) != 2 || kinds[AnomalyAboveCurrent] != 2 || kinds[AnomalyUnknownVersion] != 2 {
		t.Errorf("open window: anomalies %+v; want 2 above-current, 2 unknown-version", cs.Anomalies)
	}
	cs.Anomalies, cs.Window = nil, "closed"
	CountedAnomalies(cs, []int64{0, 3})
	for _, a := range cs.Anomalies {
		if a.Kind == AnomalyBelowClosed && a.Count != 5 {
			t.Errorf("closed window: %d below; want 5", a.Count)
		}
	}
	if len(cs.Anomalies) != 3 {
		t.Errorf("closed window: anomalies %+v; want three kinds", cs.Anomalies)
	}
	if got := NextUp(cs, []string{"0004", "0005"}, 3); got != "applies 0004 and 0005 to users" {
		t.Errorf("next up: %q", got)
	}
}
