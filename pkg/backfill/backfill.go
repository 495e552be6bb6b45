package backfill

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Batch sizes.
const (
	DefaultBatch = 500
	// FerretDBMaxBatch: FerretDB v1 hangs on an update command with 100 or
	// more matching statements, so batches stay well below.
	FerretDBMaxBatch = 50
	// DefaultServerRange is how many _ids one server-side update covers
	// by default (Options.ServerRange): a range is one updateMany (one
	// per step on the marker path), a lease fence and, where the target
	// schema is enforced, one read of its documents, and some servers
	// (FerretDB 2 + DocumentDB) evaluate an updateMany with an _id range
	// by scanning the whole collection, so what a range costs besides its
	// documents grows with the collection. 5,000 keeps that part small
	// there (docs/performance.md, "Backfill on the second server"), while
	// on MongoDB, which finds the range through the _id index, one update
	// of 5,000 documents is still a short write.
	DefaultServerRange = 5000
)

// Options configure [Run].
type Options struct {
	// Collections to backfill; empty means every collection with upgrades.
	Collections []string
	// Batch is how many documents are read and written per round trip
	// (default 500; at most 50 on FerretDB).
	Batch int
	// Rate caps documents upgraded per second over the run, on both paths
	// (0: no cap): Batch is capped at Rate (shared by the Workers), so no
	// batch is a burst above it, and each path pauses after a batch (a
	// range, on the server-side path) until the run's average is back
	// under it.
	Rate float64
	// MaxTime stops at the first batch boundary after this long (0: none).
	MaxTime time.Duration
	// Progress logs an events.BackfillBatch through the runner's logger
	// after every batch (the documents below the target are counted first,
	// for its estimate of what remains: a scan on some servers).
	Progress bool
	// progress receives the batches (set by Run when Progress is).
	progress func(events.BackfillBatch)
	// ServerRange is how many _ids one update of the server-side path
	// covers (default DefaultServerRange; on FerretDB v1 at most Batch).
	// It does not follow Batch, which sizes the client path's round
	// trips: a server-side range sends no document. Rate caps it as it
	// caps Batch.
	ServerRange int
	// ClientSide disables the server-side fast path: every document is read,
	// upgraded in Go and written back. By default, where the server has
	// pipeline updates, each version whose whole upgrade has a pipeline
	// form (version.PipelinePlan) is upgraded on the server with ONE
	// pipeline update per range of Batch _ids, atomic per document; where
	// it has none but applies conditional updates atomically, with one
	// updateMany per step and a progress marker (version.ServerPlan).
	ClientSide bool
	// ServerSide uses the marker path even where it is off by default
	// because the server evaluates its filters by scanning the collection
	// and applies them after a separate read (FerretDB v1; see
	// [probe.GuardedWrites]). There it cannot be guarded against
	// application writes, so it needs AssumeNoWriters too.
	ServerSide bool
	// AssumeNoWriters says that no application writes the collections
	// while the backfill runs: client-path writes are then filtered on _id
	// alone (no guard on the old values), and ServerSide is allowed where
	// it cannot be guarded. Never a default: an application write landing
	// between a read and its write would be overwritten.
	AssumeNoWriters bool
	// IgnoreReleases runs even while a live release (pkg/release) knows
	// only versions below the target (see checkReleases).
	IgnoreReleases bool
	// Workers, above 1, splits each collection's _id space into ranges
	// upgraded by that many goroutines on the client path, each range
	// claimed through a lease of its own, so several processes (on several
	// machines) running backfill with Workers > 1 share the work; a sweep
	// and the proof follow under the collection's lease. 0 or 1: one walk.
	Workers int
	// checkpointEvery bounds how often the checkpoint is written (tests).
	checkpointEvery time.Duration
	// rangesPerWorker is how many _id ranges per worker Workers split into
	// (0: the server's default, see splitPoints; tests set it).
	rangesPerWorker int
	// writeTurn, if set, is held by a worker while it writes a batch.
	writeTurn *sync.Mutex
	// serial reads each server-side range after the previous range's
	// update, and perField guards every document field by field
	// (benchmarks: what the overlap and version.WholeFilter are worth).
	serial, perField bool
	// guarded is the server's GuardedWrites capability.
	guarded probe.Capability
	// ferretDB: the server is FerretDB.
	ferretDB bool
	// arrays is how the per-field guards of a field that held an array
	// are written (version.ArraysFor the server).
	arrays version.Arrays
	// pipeline: the server may have pipeline updates (not FerretDB v1;
	// a refusal switches it off, see serverWalk); markers: the marker
	// path may run where no pipeline plan does.
	pipeline, markers bool
}

// CollectionResult is the result for one collection.
type CollectionResult struct {
	Collection string `json:"collection"`
	Target     int64  `json:"target"`
	// Upgraded by this run; TotalUpgraded since the backfill to Target began.
	Upgraded      int64 `json:"upgraded"`
	TotalUpgraded int64 `json:"totalUpgraded"`
	// Conflicts are documents another writer changed between our read and
	// our write, twice: they were left alone, for the application's lazy
	// upgrade or the next backfill.
	Conflicts int64 `json:"conflicts"`
	// Failed are documents their upgrade cannot transform, grouped.
	Failed  []FailureGroup `json:"failed"`
	Resumed bool           `json:"resumed"`
	// Complete: the walk reached the end. Proven: and afterwards no
	// document below Target remained (what tightening the validator needs).
	Complete bool `json:"complete"`
	Proven   bool `json:"proven"`
	// ServerSide counts documents upgraded on the server (no document sent).
	ServerSide     int64  `json:"serverSide"`
	ServerSideNote string `json:"serverSideNote"`
	// ProofNote says why a complete walk that found nothing left recorded
	// no proof (the window was reopened meanwhile).
	ProofNote string `json:"proofNote,omitempty"`
	// Ranges is how many _id ranges Workers shared (0: one walk), and
	// RangeSplit where their split points came from.
	Ranges     int    `json:"ranges"`
	RangeSplit string `json:"rangeSplit"`
	// RangesNote says why Workers used no ranges: an earlier run walked
	// the target's ranges, so what is below it now is swept by one worker.
	RangesNote string `json:"rangesNote"`
	// Batches and RoundTrips count this run's queries and bulk writes.
	Batches    int64 `json:"batches"`
	RoundTrips int64 `json:"roundTrips"`
	DurationMS int64 `json:"durationMs"`
}

// Result is the result of [Run].
type Result struct {
	Collections []CollectionResult `json:"collections"`
	// Stopped says why the run stopped before the end, if it did.
	Stopped Stopped `json:"stopped"`
}

// Stopped is why a run stopped early: "" (it did not), [StoppedDeadline]
// or [StoppedInterrupted]. Either way the checkpoint is saved and the next
// run resumes.
type Stopped string

// Reasons a run stopped early.
const (
	StoppedDeadline    Stopped = "deadline"    // Options.MaxTime passed
	StoppedInterrupted Stopped = "interrupted" // the context was cancelled
)

// ErrUnknownCollection is a collection the migration files give no
// upgrades ([version.ErrUnknownCollection]).
var ErrUnknownCollection = version.ErrUnknownCollection

// ErrNotApplied is a backfill whose target is not (or no longer) applied:
// the migration raising the documents to it is pending, or a down reverted
// it while the backfill ran. Wrapped in a [*NotAppliedError].
var ErrNotApplied = errors.New("the backfill's target version is not applied")

// NotAppliedError says which collection's target is not applied.
type NotAppliedError struct {
	Collection string
	// Target is the document version the backfill upgrades to, raised by
	// migration Target; Applied is the highest applied migration.
	Target, Applied int64
	// During: the target was applied when the backfill began and a down
	// reverted it meanwhile; the backfill stopped at its last checkpoint.
	During bool
}

func (e *NotAppliedError) Error() string {
	if e.During {
		return fmt.Sprintf("%s: migration %d, which raises its documents to version %d, was reverted while the backfill ran (the database is at %d): the backfill stopped and wrote nothing more", e.Collection, e.Target, e.Target, e.Applied)
	}
	return fmt.Sprintf("%s: migration %d, which raises its documents to version %d, is not applied yet (the database is at %d): apply it (and roll out the application that knows it) before backfilling",
		e.Collection, e.Target, e.Target, e.Applied)
}

func (e *NotAppliedError) Unwrap() error { return ErrNotApplied }

// checkApplied refuses a backfill of coll while the migration raising its
// documents to their current version is not applied.
func (r *backfiller) checkApplied(coll string, applied int64) error {
	if at := r.docVersionAt(coll, applied); at < r.registry.Current(coll) {
		return &NotAppliedError{Collection: coll, Target: r.registry.Current(coll), Applied: applied}
	}
	return nil
}

// stillApplied re-reads the applied version (under the walk's lease, before
// a checkpoint save): a down that reverted the target since the walk began
// stops it (invariant 1).
func (r *backfiller) stillApplied(ctx context.Context, coll string) error {
	applied, err := r.src.AppliedVersion(ctx)
	if err != nil {
		return err
	}
	if err := r.checkApplied(coll, applied); err != nil {
		err.(*NotAppliedError).During = true
		return err
	}
	return nil
}

// FailuresRemain reports whether some collection has documents its upgrade
// could not transform (listed in Failed): they stay at their old version
// until the data or the steps are fixed and backfill runs again, so a
// command line should exit non-zero.
func (r *Result) FailuresRemain() bool {
	for _, c := range r.Collections {
		if len(c.Failed) > 0 {
			return true
		}
	}
	return false
}

// checkpoint is the stored progress of one collection's backfill (see
// internal/state).
type checkpoint = state.Checkpoint

// Backfill upgrades the documents below the current version of each
// collection, in _id order, each written as a guarded delta (see
// version.DeltaOf) in unordered bulk writes, so a concurrent application
// write is never overwritten: a document that changed under us is re-read
// and retried once, then left. A document its upgrade cannot transform, or
// whose write the server refuses (a duplicate key, its validator; see
// backfiller.bulk), is listed in Failed and not written; the others are. The
// checkpoint never passes a document that was neither written nor
// counted. Progress is checkpointed, so a killed or
// stopped backfill continues where it stopped; cancelling ctx (Ctrl-C) or
// reaching MaxTime stops at a batch boundary. Each collection is walked
// under a lease of its own, so two backfills never fight and a deploy's
// `up` is never blocked.
func Run(ctx context.Context, src Source, opts Options) (*Result, error) {
	return newBackfiller(src).run(ctx, opts)
}

func (r *backfiller) run(ctx context.Context, opts Options) (*Result, error) {
	names := opts.Collections
	if len(names) == 0 {
		names = r.registry.Collections()
	}
	applied, err := r.src.AppliedVersion(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if r.registry.Current(n) == 0 {
			return nil, fmt.Errorf("%w: %s has no upgrades in the migration files: nothing to backfill (%s)", ErrUnknownCollection, n, bsonx.KnownList(r.registry.Collections()))
		}
		// Upgrading documents past the applied migrations would hand the
		// running application (which only knows those) documents newer
		// than it can read.
		if err := r.checkApplied(n, applied); err != nil {
			return nil, err
		}
		// Refuse before reading anything: a document below a func step this
		// program lacks could only be listed as a failure.
		if err := r.registry.CheckFuncs([]string{n}, math.MaxInt64); err != nil {
			return nil, err
		}
	}
	// Before anything is written: data a step would discard that the file
	// does not account for (discard.go).
	if err := r.checkDiscards(ctx, names); err != nil {
		return nil, err
	}
	if err := r.checkReleases(ctx, names, opts); err != nil {
		return nil, err
	}
	if opts.Progress && opts.progress == nil {
		opts.progress = func(b events.BackfillBatch) { r.log.Log(b) }
	}
	opts, err = r.backfillOptions(ctx, opts)
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	if opts.MaxTime > 0 {
		deadline = time.Now().Add(opts.MaxTime)
	}
	res := &Result{Collections: []CollectionResult{}}
	for _, name := range names {
		if ctx.Err() != nil {
			res.Stopped = "interrupted"
			break
		}
		r.noteSlowIDs(ctx, opts.ferretDB, name)
		var cb *CollectionResult
		var err error
		if opts.Workers > 1 {
			cb, err = r.backfillWorkers(ctx, name, opts, deadline, &res.Stopped)
		} else {
			err = r.withLock(ctx, lease.Backfill(name), func(lctx context.Context) error {
				var err error
				cb, err = r.backfillCollection(lctx, name, opts, deadline, &res.Stopped)
				return err
			})
		}
		if cb != nil {
			if cb.Failed == nil {
				cb.Failed = []FailureGroup{} // JSON: always a list
			}
			res.Collections = append(res.Collections, *cb)
		}
		if err != nil {
			return res, err
		}
		if res.Stopped != "" {
			break
		}
	}
	return res, nil
}

// backfillOptions fills in opts's defaults and what the server allows or
// needs (batch caps, the workers' write turn, guarded writes).
func (r *backfiller) backfillOptions(ctx context.Context, opts Options) (Options, error) {
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	info, err := probe.Server(ctx, r.db)
	if err != nil {
		return opts, err
	}
	// FerretDB knows fewer BSON types (see afterID).
	opts.ferretDB = info.FerretDBVersion != ""
	opts.arrays = version.ArraysFor(info.FerretDBVersion)
	if info.FerretDBVersion != "" && opts.Batch > FerretDBMaxBatch {
		opts.Batch = FerretDBMaxBatch
	}
	if info.FerretDBVersion != "" && opts.Workers > 1 {
		// Its connections are shared by every concurrent update command's
		// statements: keep the workers' writes together within the cap.
		opts.Batch = max(1, min(opts.Batch, FerretDBMaxBatch/opts.Workers))
		// SQLite has one writer: workers writing at once make it retry
		// with sleeps; taking turns lets one read while another writes.
		opts.writeTurn = &sync.Mutex{}
	}
	if opts.Workers > MaxWorkers {
		return opts, fmt.Errorf("%d workers: at most %d (MaxWorkers)", opts.Workers, MaxWorkers)
	}
	if opts.ServerRange <= 0 {
		opts.ServerRange = DefaultServerRange
	}
	if info.FerretDBVersion != "" {
		// Its server-side path scans per update and runs only on request
		// (see pathOptions): its ranges stay the batches they were.
		opts.ServerRange = min(opts.ServerRange, opts.Batch)
	}
	// Workers share the rate (see walkRange).
	opts.Batch = rateBatch(opts.Batch, opts.Rate/float64(max(opts.Workers, 1)))
	opts.ServerRange = rateBatch(opts.ServerRange, opts.Rate/float64(max(opts.Workers, 1)))
	opts.guarded = probe.GuardedWrites(info)
	if opts.rangesPerWorker == 0 {
		opts.rangesPerWorker = rangesPerWorker(opts.guarded)
	}
	if err := r.pathOptions(&opts); err != nil {
		return opts, err
	}
	if opts.checkpointEvery == 0 {
		opts.checkpointEvery = time.Second
	}
	return opts, nil
}

// belowFilter matches the documents a backfill to target visits: those
// below target and those whose version is invalid, which it reports as
// failures (version.Registry.VersionBelow).
func (r *backfiller) belowFilter(target int64) bson.D {
	return r.registry.VersionBelow(target)
}

func (r *backfiller) backfillCollection(ctx context.Context, name string, opts Options, deadline time.Time, stopped *Stopped) (*CollectionResult, error) {
	start := time.Now()
	target := r.registry.Current(name)
	coll := r.db.Collection(name)
	cb := &CollectionResult{Collection: name, Target: target}

	// Under the collection's lease: a down reverting the target holds it
	// while it runs, so the target is still applied if it is now.
	if err := r.stillApplied(ctx, name); err != nil {
		return nil, err
	}
	cp, resumed, err := r.store.Begin(ctx, name, target)
	if err != nil {
		return nil, err
	}
	cb.Resumed = resumed
	saved := time.Now()
	save := r.saveFunc(ctx, name, &saved, func(wctx context.Context) error { return r.store.SaveProgress(wctx, &cp) })
	// How many documents are below target, for the progress line's ETA:
	// counted only when someone watches (it scans on some servers).
	remaining := int64(-1)
	if opts.progress != nil {
		if n, err := coll.CountDocuments(ctx, r.belowFilter(target)); err == nil {
			remaining = n
		}
	}
	if err := r.loadNonce(ctx, name, target); err != nil {
		return nil, err
	}
	if opts.pipeline || opts.markers {
		sw := &serverWalk{r: r, coll: coll, name: name, opts: opts, deadline: deadline, start: start, cb: cb, cp: &cp, remaining: remaining, enforce: r.enforced(name)}
		stop, err := sw.run(ctx)
		if err != nil {
			_ = save()
			return cb, err
		}
		if stop != "" {
			return cb, halt(ctx, stop, stopped, save)
		}
	}
	failed := map[string]*FailureGroup{}
	defer func() {
		cb.Failed = bsonx.FailureList(failed)
		cb.TotalUpgraded = cp.Upgraded
		cb.DurationMS = time.Since(start).Milliseconds()
	}()
	w := &clientWalk{r: r, coll: coll, name: name, opts: opts, deadline: deadline, start: start, cb: cb, cp: &cp,
		save: save, saved: &saved, failed: failed, idOnly: opts.AssumeNoWriters, remaining: remaining}
	resumeFrom := cp.LastID
	stop, err := w.run(ctx)
	if err != nil {
		return cb, err
	}
	if stop != "" {
		return cb, halt(ctx, stop, stopped, save)
	}
	return cb, w.finish(ctx, resumed, resumeFrom, stopped)
}

// halt ends a walk that stopped early (stop: "interrupted" or "deadline"):
// it records why and saves the checkpoint, unless the walk stopped because
// its lease was lost (ctx's cause), which is an error: the new holder owns
// the checkpoint, and the run was not stopped by a signal.
func halt(ctx context.Context, stop string, stopped *Stopped, save func() error) error {
	if errors.Is(context.Cause(ctx), lease.ErrLost) {
		return fmt.Errorf("%w: the backfill stopped at its last checkpoint; whoever holds the lease now (or the next run) resumes from it", context.Cause(ctx))
	}
	*stopped = Stopped(stop)
	return save()
}

// finish follows a walk that reached the end: it proves that no document
// below the target remains (walking first, on a resumed run, the documents
// before where it resumed from), saves the checkpoint and, once proven,
// removes the range checkpoints.
func (w *clientWalk) finish(ctx context.Context, resumed bool, resumeFrom any, stopped *Stopped) error {
	r, cb, cp, save := w.r, w.cb, w.cp, w.save
	name, target := w.name, w.cp.Target
	cb.Complete = true
	cp.Done = true
	if ctx.Err() != nil {
		// Stopped after the last batch: the next run walks what is left
		// (nothing, or failures) and proves.
		return halt(ctx, "interrupted", stopped, save)
	}
	left, err := w.coll.CountDocuments(ctx, r.belowFilter(target), options.Count().SetLimit(1))
	if err == nil && left > 0 && resumed && resumeFrom != nil {
		// This walk began where a stopped run left off, and documents
		// below the target remain: those before that point (failures the
		// stopped run met, an old writer's) are walked now, so that this
		// run lists them and its exit status says they remain.
		if stop, err := w.rewalkHead(ctx, resumeFrom); err != nil {
			return errors.Join(err, save())
		} else if stop != "" {
			return halt(ctx, stop, stopped, save)
		}
		left, err = w.coll.CountDocuments(ctx, r.belowFilter(target), options.Count().SetLimit(1))
	}
	if err != nil {
		_ = save()
		return fmt.Errorf("check %s for documents below version %d: %w", name, target, err)
	}
	cp.Proven = left == 0
	if cp.Proven {
		// The range checkpoints are removed next: what they counted
		// joins the total first.
		if err := r.countRanges(ctx, cp); err != nil {
			_ = save()
			return err
		}
	}
	if err := save(); err != nil || !cp.Proven {
		return err
	}
	return r.prove(ctx, cb, cp)
}

// prove records cp's proof, conditional on the generation its walk began
// with (invariant 4), then removes the range checkpoints: the proof is
// saved first, so a worker finding the ranges gone finds the target
// proven. A window reopened since leaves the result unproven, with a note.
func (r *backfiller) prove(ctx context.Context, cb *CollectionResult, cp *checkpoint) error {
	ok, err := r.store.Prove(ctx, cp.ID, cp.Target, cp.Generation)
	if err != nil {
		return err
	}
	cb.Proven = ok
	if !ok {
		cb.ProofNote = fmt.Sprintf("the validator window of %s was reopened while this backfill ran: no proof was recorded; the next backfill proves it", cp.ID)
		return nil
	}
	return r.store.DropRanges(ctx, cp.ID)
}

// targetProven reports whether name's checkpoint records a proof that no
// document below target remained.
func (r *backfiller) targetProven(ctx context.Context, name string, target int64) (bool, error) {
	cp, err := r.store.Read(ctx, name)
	if err != nil || cp == nil {
		return false, err
	}
	return cp.Target == target && cp.Proven, nil
}

// saveFunc is a walk's checkpoint save: write stores the checkpoint. The
// save survives a cancelled ctx (it is how a stopped walk resumes),
// re-reads the applied version first (invariant 1), and is fenced by the
// store with the lease ctx carries, so one who lost the lease never
// overwrites the new holder's progress with older; saved records when.
func (r *backfiller) saveFunc(ctx context.Context, name string, saved *time.Time, write func(context.Context) error) func() error {
	return func() error {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := r.stillApplied(wctx, name); err != nil {
			return err
		}
		if err := write(wctx); err != nil {
			return err
		}
		*saved = time.Now()
		return nil
	}
}
