package backfill

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// MaxWorkers caps Options.Workers: each worker holds a range lease with
// its own heartbeat and a connection of the driver's pool (100 by
// default), and a backfill splits into at most 4 ranges per worker;
// beyond a few times the server's cores, more workers only contend for
// its locks and the pool (100,000 workers used 11 GB and lost their
// leases).
const MaxWorkers = 64

// ErrUnguardedServerSide is ServerSide asked for on a server where it
// cannot be guarded, without AssumeNoWriters ([*UnguardedServerSideError]).
var ErrUnguardedServerSide = errors.New("the server-side path cannot be guarded against application writes on this server")

// UnguardedServerSideError says why the server-side path cannot be
// guarded on the server.
type UnguardedServerSideError struct{ Reason string }

func (e *UnguardedServerSideError) Error() string {
	return fmt.Sprintf("%v: %s, so each step's update reads the documents and writes them apart and loses an application write landing in between; it runs only with AssumeNoWriters (no application writes the collection), and without ServerSide the client path's writes are guarded", ErrUnguardedServerSide, e.Reason)
}

func (e *UnguardedServerSideError) Unwrap() error { return ErrUnguardedServerSide }

// pathOptions decides which paths a run may take and how it writes, and
// says so (issue 24, hole 9: nothing that can lose an acknowledged write
// is a default, and no option changes the path as a side effect):
//   - the client path's writes are guarded on every server, unless
//     AssumeNoWriters;
//   - the server-side path is on by default where it is guarded: pipeline
//     updates (atomic per document) where the server has them, else the
//     marker path where the server applies conditional updates atomically;
//   - on FerretDB v1 (neither) it runs only with ServerSide, and ServerSide
//     there needs AssumeNoWriters.
func (r *backfiller) pathOptions(opts *Options) error {
	atomic := opts.guarded.Available
	switch {
	case opts.ClientSide:
	case atomic:
		opts.pipeline, opts.markers = true, true
	case opts.ServerSide && !opts.AssumeNoWriters:
		return &UnguardedServerSideError{Reason: opts.guarded.Reason}
	case opts.ServerSide:
		opts.markers = true
	}
	switch {
	case opts.AssumeNoWriters:
		r.log.Log(events.BackfillUnguarded{Reason: opts.guarded.Reason})
	case !atomic:
		r.log.Log(events.BackfillGuardScans{Reason: opts.guarded.Reason})
	}
	return nil
}

// noPipelines is a pipeline update the server refused as such: it has
// none, and the marker path takes over.
type noPipelines struct{ err error }

func (e *noPipelines) Error() string {
	return fmt.Sprintf("the server refused a pipeline update (%s): upgraded with one update per step and a progress marker", probe.ServerMessage(e.err))
}

// pipelines reports whether pipeline updates may still be tried (no
// earlier range of this run found the server without them).
func (r *backfiller) pipelines() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.noPipelines
}

// pipelineRange upgrades a range with p's one pipeline update: the
// documents at p.From without a marker (a marked one is the client path's:
// it resumes it, or refuses a marker this backfill did not write) that p
// upgrades exactly (p.Eligible), but those of exclude. It counts what the
// update modified: what this run wrote.
func (w *serverWalk) pipelineRange(p *version.PipelinePlan) rangeFunc {
	first := true
	return func(ctx context.Context, rng bson.D, exclude bson.A) (int64, string, error) {
		and := bson.A{rng, w.r.registry.VersionIs(p.From), bson.D{{Key: version.MarkerField, Value: bson.D{{Key: "$exists", Value: false}}}}}
		if len(p.Eligible) > 0 {
			and = append(and, p.Eligible)
		}
		if len(exclude) > 0 {
			and = append(and, notIn(exclude))
		}
		var res *mongo.UpdateResult
		err := retryTransient(ctx, func() (err error) {
			if err := lease.Fence(ctx); err != nil {
				return err
			}
			res, err = w.coll.UpdateMany(context.WithoutCancel(ctx), bson.D{{Key: "$and", Value: and}}, p.Pipeline)
			return err
		})
		w.cb.RoundTrips++
		var n int64
		if res != nil {
			n = res.ModifiedCount
		}
		if err != nil && first && unknownPipeline(err) {
			return 0, "", &noPipelines{err}
		}
		first = false
		if w.r.hook != nil && err == nil {
			w.r.hook("backfill.unit", p.From, 1)
		}
		return n, "", err
	}
}

// unknownPipeline: err is a server's refusal of the update command itself
// (not of one document, not transient, not a lost lease): a server
// without pipeline updates answers so.
func unknownPipeline(err error) bool {
	var se mongo.ServerError
	if errors.Is(err, lease.ErrLost) || probe.Transient(err) || !errors.As(err, &se) {
		return false
	}
	return probe.IsNotSupported(err) || !probe.RefusesDocument(probe.ServerCode(err))
}

// enforced reports whether the client path validates name's upgrades
// against the target schema (a validator whose action is not warn).
func (r *backfiller) enforced(name string) bool {
	s := migration.StateBefore(r.migrations, name, math.MaxInt64)
	return s.Validator != nil && s.Action != migration.ActionWarn
}

// invalid reads the documents at version vm in range rng and returns the
// _ids of those the client path would not write: their upgrade fails (or
// fails the target schema), or their marker is not this backfill's. The
// server-side updates leave them out, so the client path lists them, and
// the stored result is the same on every path (issue 24, hole 10).
// (Documents travel one way for this check; the writes stay on the
// server. A document an old release changes between this read and the
// update is not checked again.)
func (w *serverWalk) invalid(ctx context.Context, rng, vm bson.D, trips *int64) (bson.A, error) {
	var docs []bson.D
	err := retryTransient(ctx, func() error {
		cur, err := w.coll.Find(ctx, bson.D{{Key: "$and", Value: bson.A{rng, vm}}},
			options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(int32(w.opts.ServerRange)))
		if err != nil {
			return err
		}
		docs = docs[:0]
		return cur.All(ctx, &docs)
	})
	*trips++
	if err != nil {
		return nil, fmt.Errorf("read %s to check its upgrades: %w", w.name, err)
	}
	var out bson.A
	for _, d := range docs {
		up, changed, err := w.r.registry.Upgrade(w.name, d)
		if err == nil {
			err = w.r.markerTrusted(w.name, d)
		}
		if err == nil && changed {
			err = w.r.registry.Validate(w.name, up)
		}
		if err != nil {
			id, _ := bsonx.Lookup(d, "_id")
			out = append(out, id)
		}
	}
	return out, nil
}

func notIn(ids bson.A) bson.D {
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$nin", Value: ids}}}}
}

// nonces holds, per collection, the nonce of its marker plan ("" when
// none is stored): a backfill trusts only markers carrying it.
type nonces struct {
	mu sync.Mutex
	m  map[string]string
}

// loadNonce reads name's marker nonce for target from the state.
func (r *backfiller) loadNonce(ctx context.Context, name string, target int64) error {
	n, err := r.store.MarkerNonce(ctx, name, target, false)
	if err != nil {
		return err
	}
	r.setNonce(name, n)
	return nil
}

func (r *backfiller) setNonce(name, n string) {
	r.nonces.mu.Lock()
	defer r.nonces.mu.Unlock()
	if r.nonces.m == nil {
		r.nonces.m = map[string]string{}
	}
	r.nonces.m[name] = n
}

// markerTrusted refuses a document whose well-formed marker does not carry
// the nonce this backfill keeps for name (issue 25, item 2): it arrived in
// application data, or was left by an older mongomig, and resuming from
// it would skip steps. Other values of the field are the registry's to
// judge (version.MarkerError).
func (r *backfiller) markerTrusted(name string, d bson.D) error {
	v, ok := bsonx.Lookup(d, version.MarkerField)
	if !ok {
		return nil
	}
	m, ok := version.ParseMarker(v)
	if !ok || m.To > r.registry.Current(name) {
		return nil
	}
	r.nonces.mu.Lock()
	want := r.nonces.m[name]
	r.nonces.mu.Unlock()
	if want != "" && m.Nonce == want {
		return nil
	}
	id, _ := bsonx.Lookup(d, "_id")
	found, _ := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	return &version.MarkerError{Collection: name, ID: id, Found: string(found[5 : len(found)-1]),
		Reason: "was not written by this backfill (its nonce is not the one mongomig keeps for the plan), so it is not trusted and the document is not upgraded: check the document, remove the field, and run backfill again"}
}
