package lint_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// lintProblems lints files and words each problem as "location: severity: message".
func lintProblems(t *testing.T, files map[string]string) []string {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Location()+": "+string(p.Severity)+": "+p.Message)
	}
	return out
}

func wantProblem(t *testing.T, got []string, want string) {
	t.Helper()
	for _, g := range got {
		if strings.Contains(g, want) {
			return
		}
	}
	t.Errorf("no problem contains %q; got:\n%s", want, strings.Join(got, "\n"))
}

// TestLintCreateOnlyOptions: capped, timeseries, clusteredIndex and
// collation on a collection an earlier file declares are errors (MongoDB
// sets them only in create: src/mongo/db/catalog/collection_options.cpp,
// and collMod takes none of them: src/mongo/db/catalog/coll_mod.cpp); a
// capped collection's new size, a coarser granularity and the pre- and
// post-images may change; a finer granularity may not
// (src/mongo/db/timeseries/timeseries_options.cpp).
func TestLintCreateOnlyOptions(t *testing.T) {
	got := lintProblems(t, map[string]string{
		"0001_users.yaml":   "collections:\n  users:\n    indexes:\n      create:\n        - {keys: {email: 1}}\n  log:\n    options:\n      capped: {size: 4096}\n  metrics:\n    options:\n      timeseries: {timeField: at, granularity: minutes}\n",
		"0002_capped.yaml":  "collections:\n  users:\n    options:\n      capped: {size: 4096}\n",
		"0003_resize.yaml":  "collections:\n  log:\n    options:\n      capped: {size: 8192, max: 10}\n      changeStreamPreAndPostImages: true\n",
		"0004_finer.yaml":   "collections:\n  metrics:\n    options:\n      timeseries: {timeField: at, granularity: seconds}\n",
		"0005_coarser.yaml": "collections:\n  metrics:\n    options:\n      timeseries: {timeField: at, granularity: hours}\n",
	})
	wantProblem(t, got, "0002_capped.yaml:4:7: error: users: capped cannot be set on an existing collection: 0001_users.yaml declares users, so it exists when this migration runs")
	wantProblem(t, got, "0004_finer.yaml:4:19: error: metrics: granularity seconds is finer than minutes")
	if len(got) != 2 {
		t.Errorf("want exactly the two errors, got:\n%s", strings.Join(got, "\n"))
	}
}

// TestLintIndexChanges: collMod gives no TTL to an index without one
// (coll_mod.cpp: "no expireAfterSeconds field to update"); an index
// created again with other options needs indexes.rebuild; a TTL on a
// compound index expires nothing.
func TestLintIndexChanges(t *testing.T) {
	got := lintProblems(t, map[string]string{
		"0001_sessions.yaml": "collections:\n  sessions:\n    indexes:\n      create:\n        - {keys: {lastSeen: 1}, expireAfterSeconds: 3600}\n        - {keys: {user: 1}}\n        - {keys: {a: 1, b: 1}, expireAfterSeconds: 60}\n",
		"0002_change.yaml":   "collections:\n  sessions:\n    indexes:\n      change:\n        - {name: lastSeen_1, expireAfterSeconds: 60}\n        - {name: user_1, expireAfterSeconds: 60}\n        - {name: nowhere_1, hidden: true}\n",
		"0003_again.yaml":    "collections:\n  sessions:\n    indexes:\n      create:\n        - {keys: {user: 1}, sparse: true}\n",
		"0004_rebuild.yaml":  "collections:\n  sessions:\n    indexes:\n      rebuild:\n        - {keys: {user: 1}, sparse: true}\n",
	})
	wantProblem(t, got, "0001_sessions.yaml:7:11: error: sessions: index a_1_b_1: expireAfterSeconds needs a single-field index")
	wantProblem(t, got, "0002_change.yaml:6:11: error: sessions: index user_1 is not a TTL index, and collMod cannot make it one")
	wantProblem(t, got, "0002_change.yaml:7:11: warning: sessions: index nowhere_1 is changed but no earlier migration creates it")
	wantProblem(t, got, "0003_again.yaml:5:11: error: sessions: index user_1 exists with other keys or options")
	if len(got) != 4 {
		t.Errorf("want exactly four problems (0004's rebuild is fine), got:\n%s", strings.Join(got, "\n"))
	}
}

// TestLintViews: a migration may declare views alone; a view may not
// share a collection's name.
func TestLintViews(t *testing.T) {
	got := lintProblems(t, map[string]string{
		"0001_users.yaml": "collections:\n  users:\n    indexes:\n      create:\n        - {keys: {email: 1}}\n",
		"0002_view.yaml":  "views:\n  active_users:\n    viewOn: users\n    pipeline: [{$match: {active: true}}]\n",
		"0003_clash.yaml": "views:\n  users:\n    viewOn: active_users\n",
	})
	wantProblem(t, got, "0003_clash.yaml:2:3: error: users: declared as a collection in 0001_users.yaml and as a view here")
	if len(got) != 1 {
		t.Errorf("want one problem, got:\n%s", strings.Join(got, "\n"))
	}
}
