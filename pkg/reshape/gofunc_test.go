package reshape_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
	"github.com/mongomig/mongomig/pkg/version"
)

const goFile = `description: Totals are computed by the team's Go code.
run:
  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name}}
  - go: {name: orderTotals, down: dropTotals}
  - go: {name: stamp}
`

func registry(t *testing.T, m *migration.Migration, opts ...version.Option) *version.Registry {
	t.Helper()
	reg, err := version.FromMigrations([]*migration.Migration{m}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestRunGoFuncMongoDB: a registered Go function receives the database
// under the migration lock and runs once; one that failed runs again
// whole on the next run; down runs the declared down function and says
// plainly that the one without a down cannot be undone.
func TestRunGoFuncMongoDB(t *testing.T) {
	servers(t, "reshape_go", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		loadShop(t, db)
		m := migrationN(t, 4, goFile)
		calls := map[string]int{}
		fail := errors.New("the totals service is down")
		reg := registry(t, m,
			version.WithRunFunc("orderTotals", func(ctx context.Context, db *mongo.Database) error {
				calls["orderTotals"]++
				if err := lease.Fence(ctx); err != nil {
					t.Errorf("orderTotals runs without the lock: %v", err)
				}
				if calls["orderTotals"] == 1 {
					return fail
				}
				_, err := db.Collection("orders").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "total", Value: 1}}}})
				return err
			}),
			version.WithRunFunc("dropTotals", func(ctx context.Context, db *mongo.Database) error {
				calls["dropTotals"]++
				_, err := db.Collection("orders").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$unset", Value: bson.D{{Key: "total", Value: ""}}}})
				return err
			}),
			version.WithRunFunc("stamp", func(ctx context.Context, db *mongo.Database) error { calls["stamp"]++; return nil }))
		_, err := run(t, db, m, reshape.Options{Registry: reg})
		var oe *reshape.OpError
		if !errors.As(err, &oe) || !errors.Is(err, fail) || oe.Index != 1 || !strings.Contains(err.Error(), "0004_run.yaml:4: run operation 2 (go)") {
			t.Fatalf("first run: %v; want run operation 2's error at its line", err)
		}
		res, err := run(t, db, m, reshape.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		if calls["orderTotals"] != 2 || calls["stamp"] != 1 || !res[0].Skipped || res[1].Summary != "ran the Go function orderTotals (run 2: the earlier ones were interrupted)" {
			t.Fatalf("calls %v, results %+v", calls, res)
		}
		if n, _ := db.Collection("orders").CountDocuments(ctx, bson.D{{Key: "total", Value: 1}}); n != shopOrders {
			t.Errorf("%d orders have a total, want %d", n, shopOrders)
		}
		if res, err = run(t, db, m, reshape.Options{Registry: reg}); err != nil || !res[1].Skipped || calls["orderTotals"] != 2 {
			t.Fatalf("third run: %+v, %v, calls %v; want nothing run again", res, err, calls)
		}
		res, err = revert(t, db, m, reshape.Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		if calls["dropTotals"] != 1 || !strings.Contains(res[0].Unrestorable, "go stamp (run operation 3) declares no down") || res[1].Unrestorable != "" {
			t.Fatalf("revert: calls %v, results %+v", calls, res)
		}
		if n, _ := db.Collection("orders").CountDocuments(ctx, bson.D{{Key: "total", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
			t.Errorf("%d orders keep a total after down", n)
		}
	})
}

// TestRunGoFuncMissing: a binary without the function is refused by the
// dry run and by up before any operation runs (the embed before it
// too), naming the file, line and how to build one that has it.
func TestRunGoFuncMissing(t *testing.T) {
	db := sandboxtest.Database(t, "reshape_go_missing")
	ctx := context.Background()
	loadShop(t, db)
	m := migrationN(t, 4, goFile)
	reg := registry(t, m, version.WithRunFunc("orderTotals", func(context.Context, *mongo.Database) error { return nil }))
	plan, err := reshape.PlanWith(ctx, db, m, reg)
	if err != nil {
		t.Fatal(err)
	}
	if plan[1].Refused != "" || !strings.Contains(plan[2].Refused, "0004_run.yaml:5: the run operation `go: stamp` is not registered in this mongomig binary; build your own with pkg/command and version.WithRunFunc(\"stamp\", fn)") {
		t.Fatalf("plan %+v", plan)
	}
	_, err = run(t, db, m, reshape.Options{Registry: reg})
	if !errors.Is(err, reshape.ErrRunFuncMissing) {
		t.Fatalf("run: %v, want ErrRunFuncMissing", err)
	}
	if n, _ := db.Collection("orders").CountDocuments(ctx, bson.D{{Key: "productName", Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
		t.Errorf("the embed before the missing function ran (%d orders)", n)
	}
	if err := reshape.CheckRunFuncs(m, reg, true); !errors.Is(err, reshape.ErrRunFuncMissing) || !strings.Contains(err.Error(), "down `go: dropTotals`") {
		t.Errorf("down check: %v", err)
	}
}
