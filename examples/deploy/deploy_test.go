package deploy_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/examples/deploy"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

func TestMigrateAppliesOnceThenNothing(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "deploy")
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	applied, err := deploy.Migrate(ctx, db, logger)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range applied {
		names = append(names, a.Name)
	}
	if !slices.Equal(names, []string{"contact", "split_name"}) {
		t.Fatalf("applied %v, want contact and split_name", names)
	}
	// The sandbox refuses validators: the runner says so instead of failing,
	// and the application's Validate enforces them.
	if !slices.Contains(applied[0].ClientSideValidators, "users") {
		t.Errorf("users validator not reported client-side only: %+v", applied[0])
	}
	if !strings.Contains(log.String(), "version=2") {
		t.Errorf("no event for migration 2 in the log:\n%s", &log)
	}

	// The index as sent (FerretDB accepts sparse but does not list it back).
	var index *runner.CommandResult
	for i, c := range applied[0].Commands {
		if c.Name == "createIndexes" {
			index = &applied[0].Commands[i]
		}
	}
	if index == nil || index.Outcome != runner.OutcomeOK || index.Index != "contact.email_1" ||
		!strings.Contains(string(index.Text), `"unique":true`) || !strings.Contains(string(index.Text), `"sparse":true`) {
		t.Errorf("no unique sparse index on contact.email created: %+v", index)
	}
	if n, err := db.Collection("users").Indexes().ListSpecifications(ctx); err != nil || len(n) != 2 {
		t.Errorf("users indexes: %v, %v; want _id_ and contact.email_1", n, err)
	}

	again, err := deploy.Migrate(ctx, db, logger)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Migrate: %d applied, %v; want nothing and no error", len(again), err)
	}
}

// TestMigrateFromManyReplicas: replicas starting together apply each
// migration once between them.
func TestMigrateFromManyReplicas(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "deploy")
	logger := slog.New(slog.DiscardHandler)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total []runner.Applied
	)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied, err := deploy.Migrate(ctx, db, logger)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total = append(total, applied...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(total) != 2 {
		t.Fatalf("replicas applied %d migrations between them, want 2", len(total))
	}
	n, err := db.Collection(runner.DefaultLedgerCollection).CountDocuments(ctx, bson.D{})
	if err != nil || n != 2 {
		t.Fatalf("ledger holds %d entries (%v), want 2", n, err)
	}
}
