package reshape

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// Options tune how run-once operations touch many documents.
type Options struct {
	// Batch is how many documents (parents, for extract) one batch reads
	// (0: 500).
	Batch int
	// Rate limits the documents read per second (0: no limit).
	Rate float64
	// MaxPasses bounds extract's passes (0: 10): each pass after the first
	// moves what old releases appended during the one before.
	MaxPasses int
	// Registry holds the Go functions `go:` operations run
	// (version.WithRunFunc); nil: none.
	Registry *version.Registry
	// Log receives progress (nil: nothing).
	Log events.Logger
	// Hook, set only by tests, runs at named points ("reshape.read",
	// "reshape.children", "reshape.parent", "reshape.batch"; embed:
	// "reshape.embed" before each guarded write, "reshape.down.unset").
	Hook func(point string, version int64, i int)
}

func (o *Options) defaults() {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.MaxPasses <= 0 {
		o.MaxPasses = 10
	}
	if o.Log == nil {
		o.Log = events.Discard
	}
}

// OpResult is what one run-once operation did.
type OpResult struct {
	Index int               `json:"index"`
	Kind  migration.RunKind `json:"kind"`
	// Summary says it in a line ("renamed a to b").
	Summary string `json:"summary"`
	// Documents counts the documents renamed, dropped or copied, or the
	// elements moved, by every run of the operation; after a crash an
	// extract's count may miss the batch in flight then (the data does
	// not: every element is moved exactly once).
	Documents int64 `json:"documents"`
	// Skipped: the operation had finished in an earlier run.
	Skipped bool `json:"skipped,omitempty"`
	// Unrestorable (a revert by down) says in a line what the operation
	// destroyed that down cannot bring back (a dropped collection).
	Unrestorable string `json:"unrestorable,omitempty"`
	// Dangling (embed) counts the referencing documents whose reference
	// names no source document, found by the operation's last pass; they
	// are left without the copy. DanglingIDs names the first of them
	// (relaxed Extended JSON).
	Dangling    int64    `json:"dangling,omitempty"`
	DanglingIDs []string `json:"danglingIds,omitempty"`
}

// Run applies m's run-once operations in order, each once: an operation
// recorded done is skipped, one interrupted resumes from its progress.
// ctx must carry the migration lock (lease.Hold): every write is fenced.
func Run(ctx context.Context, db *mongo.Database, m *migration.Migration, opts Options) ([]OpResult, error) {
	opts.defaults()
	if len(m.Run) == 0 {
		return nil, nil
	}
	info, err := probe.Server(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := missingRunFunc(m, opts.Registry, false); err != nil {
		return nil, err
	}
	st := state.New(db)
	var out []OpResult
	for i, op := range m.Run {
		p, err := st.RunProgressOf(ctx, m.Version, i, string(op.Kind))
		if err != nil {
			return out, err
		}
		r := OpResult{Index: i, Kind: op.Kind, Documents: p.Moved}
		if p.Done {
			r.Skipped, r.Summary = true, describe(op)+" (done by an earlier run)"
			out = append(out, r)
			continue
		}
		o := &operation{db: db, st: st, m: m, op: op, p: &p, opts: opts, ferretDB: info.FerretDBVersion != "", arrays: version.ArraysFor(info.FerretDBVersion), start: time.Now()}
		if err := o.run(ctx); err != nil {
			return out, &OpError{File: m.File, Line: op.Pos.Line, Index: i, Kind: op.Kind, Err: err}
		}
		p.Done = true
		if err := st.SaveRunProgress(ctx, &p); err != nil {
			return out, err
		}
		r.Documents, r.Summary, r.Dangling, r.DanglingIDs = p.Moved, o.summary, o.dangling, o.danglingIDs
		opts.Log.Log(events.RunOpDone{Version: m.Version, Index: i, Summary: o.summary})
		out = append(out, r)
	}
	return out, nil
}

// OpError is a run-once operation that failed; what it did before is
// kept (its progress), and running it again resumes.
type OpError struct {
	File  string
	Line  int
	Index int
	Kind  migration.RunKind
	Err   error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("%s:%d: run operation %d (%s): %v", e.File, e.Line, e.Index+1, e.Kind, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

type operation struct {
	db       *mongo.Database
	st       *state.Store
	m        *migration.Migration
	op       migration.RunOp
	p        *state.RunProgress
	opts     Options
	ferretDB bool
	// arrays is how a guard on an array is written (see version.Arrays).
	arrays  version.Arrays
	start   time.Time
	summary string
	// dangling and danglingIDs (embed): the documents of the current pass
	// whose reference names no source document.
	dangling    int64
	danglingIDs []string
}

func (o *operation) run(ctx context.Context) error {
	switch o.op.Kind {
	case migration.RunRename:
		return o.rename(ctx)
	case migration.RunDrop:
		return o.drop(ctx)
	case migration.RunCopy:
		return o.copy(ctx)
	case migration.RunExtract:
		return o.extract(ctx)
	case migration.RunEmbed:
		return o.embed(ctx)
	case migration.RunGo:
		return o.goRun(ctx, o.op.Func)
	}
	return fmt.Errorf("unknown run operation %q", o.op.Kind)
}

func (o *operation) hook(point string, i int) {
	if o.opts.Hook != nil {
		o.opts.Hook(point, o.m.Version, i)
	}
}

// throttle waits after a batch of n documents so the rate holds.
func (o *operation) throttle(ctx context.Context, n int) error {
	if o.opts.Rate <= 0 || n == 0 {
		return ctx.Err()
	}
	t := time.NewTimer(time.Duration(float64(n) / o.opts.Rate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// save checkpoints the progress and reports it.
func (o *operation) save(ctx context.Context) error {
	if err := o.st.SaveRunProgress(ctx, o.p); err != nil {
		return err
	}
	o.opts.Log.Log(events.RunOpProgress{Version: o.m.Version, Index: o.p.Index, Op: string(o.op.Kind),
		Pass: o.p.Pass, Moved: o.p.Moved, Elapsed: time.Since(o.start)})
	return nil
}

func describe(op migration.RunOp) string {
	switch op.Kind {
	case migration.RunRename:
		return fmt.Sprintf("rename %s to %s", op.From, op.To)
	case migration.RunDrop:
		return "drop " + op.Name
	case migration.RunCopy:
		return fmt.Sprintf("copy %s into %s", op.From, op.To)
	case migration.RunEmbed:
		return describeEmbed(op.Embed)
	case migration.RunGo:
		return "run the Go function " + op.Func
	}
	x := op.Extract
	s := fmt.Sprintf("extract %s.%s into %s (%s: the parent's _id)", x.From, x.Array, x.To, x.Ref)
	switch x.Keep {
	case migration.KeepCount:
		s += fmt.Sprintf(", the parent keeps the count in %s", x.CountField)
	case migration.KeepFirst:
		s += fmt.Sprintf(", the parent keeps the first %d", x.First)
	}
	return s
}
