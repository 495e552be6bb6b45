package lifecycle

import (
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// TestLifecycleView: mongomig drops views only; an existing view is
// changed in place; a collection under the view's name refuses.
func TestLifecycleView(t *testing.T) {
	v := &migration.View{Name: "recent", ViewOn: "events"}
	if st := View(v, false, false, ""); st.Name != "create" || st.Refused != "" || BSONText(st.Fields) != `{"viewOn":"events","pipeline":[]}` {
		t.Fatalf("step %+v", st)
	}
	if st := View(v, true, true, "view"); st.Name != "collMod" || st.Features[0] != probe.FeatureViewsModify || st.Refused != "" {
		t.Fatalf("step %+v", st)
	}
	if st := View(v, true, true, "collection"); st.Refused != "recent is a collection on the server, not a view" {
		t.Fatalf("step %+v", st)
	}
	v.Drop = true
	if st := View(v, true, true, "collection"); st.Name != "drop" || !strings.Contains(st.Refused, "mongomig drops views only") {
		t.Fatalf("step %+v", st)
	}
}

// TestLifecycleIndexChange: collMod cannot make an index a TTL index
// (src/mongo/db/catalog/coll_mod.cpp: "no expireAfterSeconds field to
// update").
func TestLifecycleIndexChange(t *testing.T) {
	ttl, hidden := int64(60), true
	f, refused := IndexChange("events", migration.IndexChange{Name: "at_1", ExpireAfterSeconds: &ttl, Hidden: &hidden}, true, nil)
	if len(f) != 2 || f[0] != probe.FeatureTTLModify || f[1] != probe.FeatureHiddenModify || !strings.HasPrefix(refused, "index at_1 is not a TTL index") {
		t.Fatalf("features %v, refused %q", f, refused)
	}
	if _, refused := IndexChange("events", migration.IndexChange{Name: "k_1", Hidden: &hidden}, false, nil); refused != "events has no index k_1 to change" {
		t.Fatalf("refused %q", refused)
	}
}

// TestLifecycleUndeclared: mongomig's own, the server's, the declared and
// the family members are left out; the rest by name, typed.
func TestLifecycleUndeclared(t *testing.T) {
	ms := []*migration.Migration{{Version: 1, Collections: []*migration.Collection{{Name: "users"}}}}
	listed := []Listed{{"zeta", ""}, {"users", "collection"}, {"mongomig_backfill", "collection"}, {"ledger", "collection"}, {"system.views", "collection"}, {"alpha", "view"}}
	got := Undeclared(ms, []string{"ledger", "lock"}, listed)
	if len(got) != 2 || got[0].Name != "alpha" || got[0].Type != "view" || got[1].Name != "zeta" || got[1].Type != "collection" {
		t.Fatalf("undeclared %+v", got)
	}
}
