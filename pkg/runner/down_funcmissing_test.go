package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// nameFuncFS upgrades with a declarative step and downgrades with a Go
// function that the stock binary does not have.
var nameFuncFS = fstest.MapFS{"0001_name.yaml": {Data: []byte(`collections:
  people:
    upgrade:
      - set: {name: anonymous}
    downgrade:
      - func: restoreName
`)}}

// TestDownRefusesAMissingDowngradeFuncFirst: documents need a downgrade
// whose func this program lacks: down (and its dry run) refuse with
// ErrFuncMissing (the CLI's exit 2) naming the func, before any command
// that changes the server (down used to open the validator window, then
// fail on the first document).
func TestDownRefusesAMissingDowngradeFuncFirst(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	var mu sync.Mutex
	var sent []bson.Raw
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		sent = append(sent, e.Command)
		mu.Unlock()
	}}
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(monitor)).Database("app")
	if _, err := db.Collection("people").InsertOne(ctx, bson.D{{Key: "_id", Value: bson.NewObjectID()}}); err != nil {
		t.Fatal(err)
	}
	team := newRunner(t, db, nameFuncFS, runner.WithVersionOptions(version.WithFunc("restoreName", func(d bson.D) (bson.D, error) { return d, nil })))
	if _, err := team.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := backfill.Run(ctx, team, backfill.Options{}); err != nil {
		t.Fatal(err)
	}
	stock := newRunner(t, db, nameFuncFS)
	_, planErr := stock.PlanDown(ctx, 0)
	mu.Lock()
	before := len(sent)
	mu.Unlock()
	_, err := stock.DownTo(ctx, 0)
	var fe *version.FuncMissingError
	if !errors.Is(err, runner.ErrFuncMissing) || !errors.As(err, &fe) || fe.Func != "restoreName" || !fe.Downgrade || fe.Documents == 0 || !strings.Contains(err.Error(), "func: restoreName") {
		t.Fatalf("DownTo(0) = %v, want a FuncMissingError naming restoreName's downgrade and the documents needing it", err)
	}
	if !errors.Is(planErr, runner.ErrFuncMissing) {
		t.Errorf("PlanDown(0) = %v, want the same refusal", planErr)
	}
	mu.Lock()
	for _, w := range writes(sent[before:]) {
		if w != "insert mongomig_lock" && w != "delete mongomig_lock" && w != "update mongomig_lock" {
			t.Errorf("a refused down sent %s", w)
		}
	}
	mu.Unlock()
	if v := ledgerVersions(t, db); !equalVersions(v, 1) {
		t.Fatalf("a refused down changed the ledger: %v", v)
	}
}
