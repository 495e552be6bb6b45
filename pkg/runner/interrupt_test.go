package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestUpToZeroAppliesNothing: version 0 is a target like any other (it
// used to mean "no limit", so `up --to 0` applied everything).
func TestUpToZeroAppliesNothing(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	applied, err := r.UpTo(ctx, 0)
	if err != nil || len(applied.Applied) != 0 || len(ledgerVersions(t, db)) != 0 {
		t.Fatalf("UpTo(0) = %d applied, %v; ledger %v", len(applied.Applied), err, ledgerVersions(t, db))
	}
	p, err := r.Plan(ctx, 0)
	if err != nil || len(p.Migrations) != 0 {
		t.Fatalf("Plan(0) = %+v, %v", p, err)
	}
}

// TestInterruptedBetweenCommands: cancelling the context (what SIGINT and
// SIGTERM do in the CLI) stops Up at the next command boundary with an
// InterruptedError that says what was applied; the command already sent
// completes, the lock is released, and running Up again finishes.
func TestInterruptedBetweenCommands(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel right after the first command of migration 2.
	runner.SetHook(r, func(point string, version int64, i int) {
		if point == "command" && version == 2 && i == 0 {
			cancel()
		}
	})
	applied, err := r.Up(ctx)
	var ie *runner.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("Up = %v, want an InterruptedError", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("InterruptedError does not unwrap to context.Canceled: %v", err)
	}
	if len(applied.Applied) != 1 || len(ie.Done) != 1 || ie.Total != 4 || ie.Partial == nil || ie.Partial.Version != 2 || len(ie.Partial.Done) != 1 {
		t.Fatalf("applied %d; error %+v", len(applied.Applied), ie)
	}
	for _, want := range []string{"interrupted: 1 of 4 migrations applied", "0002_orders_and_blog.yaml stopped between commands", "running up again (to the same target) continues"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1) {
		t.Fatalf("ledger = %v, want [1]", v)
	}
	// The lock was released: a new run does not wait for its lease.
	r2 := newRunner(t, db, samples(t), runner.WithLockWait(0))
	if _, err := r2.Up(context.Background()); err != nil {
		t.Fatalf("Up after the interruption: %v", err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("ledger after the second Up = %v", v)
	}
}

// TestVersionFieldHasOneSource: version.WithField given through
// WithVersionOptions is the field the window, backfill, down and status
// use too (it used to stamp _v while they filtered on version); naming two
// different fields is an error.
func TestVersionFieldHasOneSource(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t), runner.WithVersionOptions(version.WithField("_v")))
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var window string
	for _, c := range p.Migrations[2].Commands {
		if c.Collection == "users" && c.Name == "collMod" {
			window = string(c.Text)
		}
	}
	if !strings.Contains(window, `"_v"`) || strings.Contains(window, `"version"`) {
		t.Errorf("window of 0003 does not filter on _v: %s", window)
	}
	_, err = runner.New(db, samples(t), runner.WithVersionField("v"), runner.WithVersionOptions(version.WithField("_v")))
	if err == nil || !strings.Contains(err.Error(), "name the version field once") {
		t.Errorf("conflicting fields: %v", err)
	}
}
