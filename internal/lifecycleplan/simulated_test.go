package lifecycleplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
)

// The planner reads the server (listCollections, listIndexes) and sends
// nothing: on the sandbox it plans TTL, hidden and view commands the
// sandbox itself lacks (refused later, at plan time, from the probe:
// lifecycle.txtar), so the simulated state of a run is tested here and
// the commands sent on the second server (lifecycle_onerun_mongodb.txtar).

func load(t *testing.T, files map[string]string) []*migration.Migration {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(strings.TrimLeft(text, "\n"))}
	}
	ms, err := migration.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// planAll plans every migration with one Planner (sim: with a simulated
// state, as a dry run does), returning each one's commands.
func planAll(t *testing.T, db *mongo.Database, ms []*migration.Migration, sim bool) [][]cmddoc.Command {
	t.Helper()
	ctx := context.Background()
	p := &lifecycleplan.Planner{DB: db, Migrations: ms}
	if sim {
		p.Simulated = &lifecycleplan.Simulated{}
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
	}
	var out [][]cmddoc.Command
	for _, m := range ms {
		cmds, err := p.Commands(ctx, m, exists, func(string) (bson.D, error) { return nil, nil })
		if err != nil {
			t.Fatalf("plan %s: %v", m.File, err)
		}
		out = append(out, cmds)
	}
	return out
}

func find(cmds []cmddoc.Command, name, index string) *cmddoc.Command {
	for i, c := range cmds {
		if c.Name == name && c.Index == index {
			return &cmds[i]
		}
	}
	return nil
}

func insert(t *testing.T, db *mongo.Database, coll string, docs ...bson.D) {
	t.Helper()
	if _, err := db.Collection(coll).InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

// TestPlanSeesIndexesEarlierPendingMigrationsCreate: 0001 creates a TTL
// index and a plain one on sessions, which the server has; 0002 changes
// the TTL and hides the other. Planned together (a dry run) 0002 sees
// 0001's indexes, as up sees them once it has sent 0001; planned from the
// server alone, it finds neither (the review's bug).
func TestPlanSeesIndexesEarlierPendingMigrationsCreate(t *testing.T) {
	db := sandboxtest.Database(t, "simidx")
	insert(t, db, "sessions", bson.D{{Key: "_id", Value: 1}})
	ms := load(t, map[string]string{
		"0001_create.yaml": `
collections:
  sessions:
    indexes:
      create:
        - {keys: {lastSeen: 1}, expireAfterSeconds: 3600}
        - {keys: {token: 1}}
`,
		"0002_change.yaml": `
collections:
  sessions:
    indexes:
      change:
        - {name: lastSeen_1, expireAfterSeconds: 1800}
        - {name: token_1, hidden: true}
`,
	})
	plans := planAll(t, db, ms, true)
	for _, idx := range []string{"lastSeen_1", "token_1"} {
		c := find(plans[1], "collMod", idx)
		if c == nil || c.Refused != "" {
			t.Fatalf("0002's collMod of %s: %+v, want it planned and not refused", idx, c)
		}
	}
	alone := planAll(t, db, ms, false)
	if c := find(alone[1], "collMod", "lastSeen_1"); c == nil || c.Refused != "sessions has no index lastSeen_1 to change" {
		t.Fatalf("from the server alone: %+v", c)
	}
}

// TestPlanSeesIndexesEarlierPendingMigrationsDrop: the server has
// token_1; 0001 drops it and 0002 changes it. up would send the drop and
// then fail the change; the dry run refuses the change before anything
// is sent.
func TestPlanSeesIndexesEarlierPendingMigrationsDrop(t *testing.T) {
	db := sandboxtest.Database(t, "simdrop")
	insert(t, db, "sessions", bson.D{{Key: "_id", Value: 1}, {Key: "token", Value: "a"}})
	if _, err := db.Collection("sessions").Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "token", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	ms := load(t, map[string]string{
		"0001_drop.yaml": `
collections:
  sessions:
    indexes:
      drop: [token_1]
`,
		"0002_change.yaml": `
collections:
  sessions:
    indexes:
      change:
        - {name: token_1, hidden: true}
`,
	})
	plans := planAll(t, db, ms, true)
	if c := find(plans[1], "collMod", "token_1"); c == nil || c.Refused != "sessions has no index token_1 to change" {
		t.Fatalf("0002's collMod: %+v, want refused: 0001 drops token_1", c)
	}
	if c := find(planAll(t, db, ms, false)[1], "collMod", "token_1"); c == nil || c.Refused != "" {
		t.Fatalf("from the server alone (up, before it sends 0001 the server has token_1): %+v", c)
	}
}

// TestPlanSeesViewsEarlierPendingMigrationsDeclare: 0001 creates a view,
// 0002 changes it (collMod), 0003 drops it, 0004 creates it again
// (create: the view no longer exists when it runs).
func TestPlanSeesViewsEarlierPendingMigrationsDeclare(t *testing.T) {
	db := sandboxtest.Database(t, "simview")
	insert(t, db, "sessions", bson.D{{Key: "_id", Value: 1}})
	view := func(stage string) string {
		return "views:\n  active:\n    viewOn: sessions\n    pipeline: [" + stage + "]\n"
	}
	ms := load(t, map[string]string{
		"0001_view.yaml":   view("{$match: {active: true}}"),
		"0002_change.yaml": view("{$match: {active: false}}"),
		"0003_drop.yaml":   "views:\n  active: {drop: true}\n",
		"0004_again.yaml":  view("{$match: {token: 1}}"),
	})
	plans := planAll(t, db, ms, true)
	for i, want := range []string{"create", "collMod", "drop", "create"} {
		if len(plans[i]) != 1 || plans[i][0].Name != want || plans[i][0].Refused != "" {
			t.Fatalf("%s: %+v, want one %s", ms[i].File, plans[i], want)
		}
	}
}

// TestPlanSeesOptionsEarlierPendingMigrationsChange: the server's log is
// capped at 1 MiB; 0001 resizes it to 2 MiB with a max of 100, 0002 keeps
// 2 MiB and removes the max. 0002's collMod must send cappedMax 0 (what
// up reads once 0001 is sent); from the server alone (max 0 already) it
// would leave 0001's max in place.
func TestPlanSeesOptionsEarlierPendingMigrationsChange(t *testing.T) {
	db := sandboxtest.Database(t, "simopts")
	if err := db.RunCommand(context.Background(), bson.D{{Key: "create", Value: "log"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}}).Err(); err != nil {
		t.Fatal(err)
	}
	ms := load(t, map[string]string{
		"0001_bigger.yaml": `
collections:
  log:
    options:
      capped: {size: 2097152, max: 100}
`,
		"0002_nomax.yaml": `
collections:
  log:
    options:
      capped: {size: 2097152}
`,
	})
	plans := planAll(t, db, ms, true)
	if len(plans[1]) != 1 || plans[1][0].Refused != "" || !strings.Contains(string(plans[1][0].Text), `"cappedMax":0`) {
		t.Fatalf("0002: %+v, want one collMod with cappedMax 0", plans[1])
	}
	if alone := planAll(t, db, ms, false); len(alone[1]) != 1 || strings.Contains(string(alone[1][0].Text), "cappedMax") {
		t.Fatalf("from the server alone: %+v, want a collMod of the size only", alone[1])
	}
}

// TestPlanCountsBacklogEarlierPendingMigrationsLeave: 0001 builds a TTL
// of an hour on sessions, deleting its backlog first (3 documents); 0002
// lowers it to half an hour. 0002's deletion counts only what 0001's
// leaves (1 document), as up counts it once 0001's deletion has run.
func TestPlanCountsBacklogEarlierPendingMigrationsLeave(t *testing.T) {
	db := sandboxtest.Database(t, "simexpiry")
	now := time.Now()
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	insert(t, db, "sessions",
		bson.D{{Key: "_id", Value: 1}, {Key: "lastSeen", Value: old}},
		bson.D{{Key: "_id", Value: 2}, {Key: "lastSeen", Value: old}},
		bson.D{{Key: "_id", Value: 3}, {Key: "lastSeen", Value: old}},
		bson.D{{Key: "_id", Value: 4}, {Key: "lastSeen", Value: now.Add(-45 * time.Minute)}},
		bson.D{{Key: "_id", Value: 5}, {Key: "lastSeen", Value: now.Add(time.Hour)}})
	ms := load(t, map[string]string{
		"0001_ttl.yaml":   "collections:\n  sessions:\n    indexes:\n      create:\n        - {keys: {lastSeen: 1}, expireAfterSeconds: 3600}\n",
		"0002_lower.yaml": "collections:\n  sessions:\n    indexes:\n      change:\n        - {name: lastSeen_1, expireAfterSeconds: 1800}\n",
	})
	counted := func(sim bool) []int64 {
		ctx := context.Background()
		p := &lifecycleplan.Planner{DB: db, Migrations: ms, Expiry: func(ctx context.Context, _ int64, coll string, idx migration.Index) (*cmddoc.Command, error) {
			cutoff := lifecycle.ExpiryCutoff(time.Now(), idx)
			n, err := db.Collection(coll).CountDocuments(ctx, lifecycle.ExpiryFilter(idx, cutoff))
			if err != nil || n == 0 {
				return nil, err
			}
			c := cmddoc.New(coll, lifecycle.CommandDeleteExpired, idx.Name, lifecycle.ExpiryDoc(coll, idx, cutoff, 1000))
			c.Documents = &n
			return &c, nil
		}}
		if sim {
			p.Simulated = &lifecycleplan.Simulated{}
		}
		exists := map[string]bool{"sessions": true}
		var out []int64
		for _, m := range ms {
			cmds, err := p.Commands(ctx, m, exists, func(string) (bson.D, error) { return nil, nil })
			if err != nil {
				t.Fatal(err)
			}
			if c := find(cmds, lifecycle.CommandDeleteExpired, "lastSeen_1"); c != nil {
				out = append(out, *c.Documents)
			} else {
				out = append(out, 0)
			}
		}
		return out
	}
	if got := counted(true); !slices.Equal(got, []int64{3, 1}) {
		t.Fatalf("planned together, the deletions count %v, want [3 1]", got)
	}
	if got := counted(false); !slices.Equal(got, []int64{3, 0}) {
		t.Fatalf("from the server alone (0002 finds no lastSeen_1 to lower), the deletions count %v, want [3 0]", got)
	}
}
