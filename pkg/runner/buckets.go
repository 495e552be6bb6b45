package runner

// Time-bucketed families (the buckets: key of the files, pkg/buckets for
// the names): internal/lifecycle decides the members a family's
// declaration wants as of a time (only names the family's pattern
// produces are members, so no other collection is ever dropped);
// internal/lifecycleplan reads the server and builds the commands that get
// there; Buckets sends them under the migration lock. The runner is the one
// sender of create, collMod, createIndexes, dropIndexes and drop for
// members.

import (
	"context"
	"fmt"
	"time"

	"github.com/mongomig/mongomig/internal/lifecycle"
	"github.com/mongomig/mongomig/internal/lifecycleplan"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/probe"
)

// BucketOptions configure [Runner.Buckets].
type BucketOptions struct {
	// DryRun: plan the commands and send nothing (no lock is taken).
	DryRun bool
	// At is the time the families are brought to (zero: the server's
	// clock, so that every process agrees on the current period).
	At time.Time
}

// BucketRun is what a [Runner.Buckets] did (or, in a dry run, would do).
type BucketRun = lifecycleplan.BucketRun

// FamilyMembers is one declared family and its members.
type FamilyMembers = lifecycle.FamilyMembers

// Buckets brings every family the applied migrations declare to its
// declared state as of opts.At: each member from the current period to
// Ahead periods ahead exists with the family's validator and indexes, the
// members kept are changed to them where they differ, and the members
// older than Keep periods are dropped. It takes the migration lock (a
// dry run takes none), so two processes running it at once send each
// command once; run again, it sends nothing. `up` runs it after the
// migrations it applies.
func (r *Runner) Buckets(ctx context.Context, opts BucketOptions) (*BucketRun, error) {
	if opts.DryRun {
		return r.planApplied(ctx, opts.At, 0)
	}
	var run *BucketRun
	err := r.withLock(withCommand(ctx, "buckets"), lockID, func(ctx context.Context) error {
		var err error
		run, err = r.bucketsUnderLock(ctx, opts.At)
		return err
	})
	return run, err
}

// bucketsUnderLock plans against the ledger read under the lock ctx
// carries and sends the plan.
func (r *Runner) bucketsUnderLock(ctx context.Context, at time.Time) (*BucketRun, error) {
	run, err := r.planApplied(ctx, at, 0)
	if err != nil || run == nil {
		return run, err
	}
	planned := run.Commands
	run.Commands = nil
	for i, p := range planned {
		res, lost, err := r.send(ctx, 0, i, p.Command)
		if err == nil {
			err = lost
		}
		if err != nil {
			return run, fmt.Errorf("buckets: %s: %s: %w", p.Collection, describeCommand(p.Command), err)
		}
		run.Commands = append(run.Commands, res)
		r.cfg.log.Log(events.CommandSent{File: "buckets", Collection: p.Collection, Command: p.Name, Summary: describeCommand(p.Command)})
	}
	return run, nil
}

// planApplied is planBuckets over the migrations the ledger records and
// those pending up to version to (0: none).
func (r *Runner) planApplied(ctx context.Context, at time.Time, to int64) (*BucketRun, error) {
	ledger, err := r.readLedger(ctx)
	if err != nil {
		return nil, err
	}
	return r.planBuckets(ctx, at, func(v int64) bool { _, ok := ledger[v]; return ok || v <= to }, true)
}

// planBuckets is the run that brings the families declared by the
// migrations applied says are applied to their state as of at; nil when
// they declare none (nothing is read). Without probed (status, which only
// reads) the server's validator capabilities are not probed, so the
// commands may send a validator the server does not enforce (status shows
// only which members would be created and dropped).
func (r *Runner) planBuckets(ctx context.Context, at time.Time, applied func(int64) bool, probed bool) (*BucketRun, error) {
	if at.IsZero() {
		at = r.cfg.bucketsAt
	}
	var caps func() (*probe.Capabilities, error)
	if probed {
		caps = func() (*probe.Capabilities, error) { return r.capabilities(ctx) }
	}
	return r.planner().Buckets(ctx, at, applied, caps)
}

// PlanBuckets is what up's run of the families would do once the
// migrations pending up to version to are applied (nil: none declares a
// family). It sends nothing.
func (r *Runner) PlanBuckets(ctx context.Context, to int64) (*BucketRun, error) {
	return r.planApplied(ctx, time.Time{}, to)
}
