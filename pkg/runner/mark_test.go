package runner_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestMarkRecordsWithoutSending: mark records a migration as applied or
// not, with its reason, sending nothing but the lock, ledger and marks
// writes; it refuses a mark that changes nothing or breaks the order.
func TestMarkRecordsWithoutSending(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	r := fixtures.NewRunner(t, db, fixtures.Samples(t))
	if _, err := r.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Mark(ctx, 3, true, "  "); !errors.Is(err, runner.ErrNoReason) {
		t.Errorf("mark without a reason: %v", err)
	}
	var me *runner.MarkError
	if _, err := r.Mark(ctx, 4, true, "x"); !errors.As(err, &me) || !strings.Contains(err.Error(), "0003_user_contact.yaml, below it, is not applied") {
		t.Errorf("mark 4 with 3 pending: %v", err)
	}
	rec.Reset()
	mk, err := r.Mark(ctx, 3, true, "contact.email_1 built by hand after the crash")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.All() {
		name := c.Index(0).Key()
		switch target, _ := c.Index(0).Value().StringValueOK(); {
		case slices.Contains([]string{"collMod", "create", "createIndexes", "dropIndexes", "update", "delete"}, name) &&
			!slices.Contains([]string{"mongomig_lock", "mongomig_migrations", "mongomig_migrations_marks"}, target):
			t.Errorf("mark sent %s", c)
		case name == "insert" && !slices.Contains([]string{"mongomig_lock", "mongomig_migrations", "mongomig_migrations_marks"}, target):
			t.Errorf("mark sent %s", c)
		}
	}
	if mk.File != "0003_user_contact.yaml" || !mk.Applied || mk.By.Host == "" {
		t.Errorf("mark = %+v", mk)
	}
	st := statusOf(t, r, runner.StatusOptions{})
	if m := st.Migrations[2]; m.State != runner.StateApplied || m.Marked == nil || m.Marked.Reason != "contact.email_1 built by hand after the crash" {
		t.Errorf("status of 0003 after the mark: %+v", m)
	}
	if _, err := r.Mark(ctx, 3, true, "again"); !errors.As(err, &me) || !strings.Contains(err.Error(), "already recorded as applied") {
		t.Errorf("mark 3 applied twice: %v", err)
	}
	if _, err := r.Mark(ctx, 2, false, "x"); !errors.As(err, &me) || !strings.Contains(err.Error(), "migration 3 (0003_user_contact.yaml), above it, is applied") {
		t.Errorf("mark 2 not applied under 3: %v", err)
	}
	if _, err := r.Mark(ctx, 3, false, "the index was not built after all"); err != nil {
		t.Fatal(err)
	}
	if got := fixtures.LedgerVersions(t, db); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("ledger after mark 3 not applied = %v", got)
	}
	st = statusOf(t, r, runner.StatusOptions{})
	if len(st.Marks) != 2 || !st.Marks[0].Applied || st.Marks[1].Applied || st.Marks[1].Reason != "the index was not built after all" || st.Migrations[2].State != runner.StatePending {
		t.Errorf("marks after two = %+v, 0003 %s", st.Marks, st.Migrations[2].State)
	}
}

// TestMarkTakesTheLock: a mark waits for the migration lock like up.
func TestMarkTakesTheLock(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := fixtures.NewRunner(t, db, fixtures.Samples(t), runner.WithLockWait(0))
	now := time.Now()
	if _, err := db.Collection("mongomig_lock").InsertOne(ctx, bson.D{{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "someone-else"},
		{Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	var lt *runner.LockTimeoutError
	if _, err := r.Mark(ctx, 1, true, "by hand"); !errors.As(err, &lt) {
		t.Fatalf("mark with the lock held: %v", err)
	}
	if got := fixtures.LedgerVersions(t, db); len(got) != 0 {
		t.Errorf("ledger after a refused mark = %v", got)
	}
}

// TestEffectiveSettings: a migration that omits validationLevel or
// validationAction keeps the collection's current one (collMod changes
// only the options it is given: MongoDB's
// src/mongo/db/catalog/coll_mod.cpp); the plan and status say where each
// comes from.
func TestEffectiveSettings(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := fstest.MapFS{
		"0001_a.yaml": {Data: []byte("collections:\n  a:\n    validator: {$jsonSchema: {bsonType: object}}\n    validationLevel: moderate\n")},
		"0002_a.yaml": {Data: []byte("collections:\n  a:\n    validator: {$jsonSchema: {bsonType: object, required: [x]}}\n")},
		"0003_b.yaml": {Data: []byte("collections:\n  b:\n    validator: {$jsonSchema: {bsonType: object}}\n")},
	}
	if err := db.CreateCollection(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	r := fixtures.NewRunner(t, db, fsys)
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := []runner.EffectiveSettings{
		{Version: 1, Collection: "a", Level: "moderate", LevelFrom: 1, LevelSource: runner.SettingDeclared, Action: "error", ActionSource: runner.SettingDefault},
		{Version: 2, Collection: "a", Level: "moderate", LevelFrom: 1, LevelSource: runner.SettingInherited, Action: "error", ActionSource: runner.SettingDefault},
		{Version: 3, Collection: "b", Level: "strict", LevelSource: runner.SettingServer, Action: "error", ActionSource: runner.SettingServer},
	}
	if !slices.Equal(p.Settings, want) {
		t.Errorf("plan settings =\n%+v\nwant\n%+v", p.Settings, want)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	a := collStatus(statusOf(t, r, runner.StatusOptions{}), "a")
	if a.ValidatorFrom != 2 || a.LevelFrom != 1 || a.Level != "moderate" || a.ActionFrom != 0 || a.Action != "error" {
		t.Errorf("status of a: validator %d, level %s from %d, action %s from %d", a.ValidatorFrom, a.Level, a.LevelFrom, a.Action, a.ActionFrom)
	}
}
