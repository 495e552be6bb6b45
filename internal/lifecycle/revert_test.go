package lifecycle

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

func parseAll(t *testing.T, files ...string) []*migration.Migration {
	t.Helper()
	var ms []*migration.Migration
	for i, f := range files {
		m, err := migration.Parse([]string{"0001_a.yaml", "0002_b.yaml", "0003_c.yaml"}[i], []byte(f))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func stepText(st RevertStep) string {
	b, _ := bson.MarshalExtJSON(st.Fields, false, false)
	s := st.Name + " " + st.Collection
	if st.Index != "" {
		s += "." + st.Index
	}
	if st.Spec != nil {
		s += " " + st.Spec.Name
	}
	if len(st.Fields) > 0 {
		s += " " + string(b)
	}
	return s
}

// TestRevertSteps: down of 0002 unhides the index in place, rebuilds the
// rebuilt one with 0001's definition, puts the capped size back (collMod
// cappedSize: where the server can, src/mongo/db/catalog/coll_mod.cpp),
// recreates the view 0002 dropped and drops the one it created; down of
// 0001 says the capped log stays capped (MongoDB sets that only at create)
// and that expired documents do not come back.
func TestRevertSteps(t *testing.T) {
	ms := parseAll(t, `collections:
  log:
    options:
      capped: {size: 4096}
  users:
    indexes:
      create:
        - {keys: {email: 1}}
        - {keys: {handle: 1}}
        - {keys: {seen: 1}, expireAfterSeconds: 60}
views:
  old_view:
    viewOn: users
    pipeline: [{$match: {a: 1}}]
`, `collections:
  log:
    options:
      capped: {size: 8192}
  users:
    indexes:
      change:
        - {name: email_1, hidden: true}
      rebuild:
        - {keys: {handle: 1}, unique: true}
views:
  old_view: {drop: true}
  new_view:
    viewOn: users
    pipeline: []
`)
	held := func(string) (Held, bool) { return Held{Capped: true, Size: 8192}, true }
	steps, lost := Revert(ms, ms[1], held)
	var got []string
	for _, s := range steps {
		got = append(got, stepText(s))
	}
	want := []string{
		"drop new_view",
		`create old_view {"viewOn":"users","pipeline":[{"$match":{"a":1}}]}`,
		`collMod log {"cappedSize":4096}`,
		"dropIndexes users.handle_1",
		"createIndexes users.handle_1 handle_1",
		`collMod users.email_1 {"index":{"name":"email_1","hidden":false}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("down of 0002:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(lost) != 0 {
		t.Errorf("down of 0002 loses %q", lost)
	}
	if steps[4].Spec == nil || steps[4].Spec.Unique {
		t.Error("the rebuilt index comes back unique: 0001 built it without")
	}
	_, lost = Revert(ms, ms[0], held)
	if len(lost) != 2 || !strings.Contains(lost[0], "log stays capped") || !strings.Contains(lost[1], "deleted as expired by seen_1") {
		t.Errorf("down of 0001 says %q", lost)
	}
}

// TestRevertGranularity: a time series made coarser cannot become finer
// again (src/mongo/db/timeseries/timeseries_options.cpp,
// isValidTimeseriesGranularityTransition): down says so and sends
// nothing for it; the pre- and post-images 0002 turned on go back off.
func TestRevertGranularity(t *testing.T) {
	ms := parseAll(t, `collections:
  metrics:
    options:
      timeseries: {timeField: at, granularity: seconds}
`, `collections:
  metrics:
    options:
      timeseries: {timeField: at, granularity: hours}
      changeStreamPreAndPostImages: true
`)
	held := func(string) (Held, bool) {
		return Held{TS: &migration.Timeseries{TimeField: "at", Granularity: "hours"}, PrePost: true}, true
	}
	steps, lost := Revert(ms, ms[1], held)
	if len(steps) != 1 || stepText(steps[0]) != `collMod metrics {"changeStreamPreAndPostImages":{"enabled":false}}` {
		t.Errorf("steps %v", steps)
	}
	if len(lost) != 1 || !strings.Contains(lost[0], "MongoDB only makes it coarser") {
		t.Errorf("lost %q", lost)
	}
}
