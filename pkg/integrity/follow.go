package integrity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/probe"
)

// A follower ([Checker.Follow]) is a long-running repair driven by one
// change stream on the database (MongoDB's $changeStream on
// `aggregate: 1`, a replica set or sharded cluster): it watches the
// collections the rules read (the sources of mirror copies, the children
// of aggregates, the referenced collections), applies each event's fixes
// with [Checker.ApplyChange] (repair's guarded writes) and then stores the
// event's resume token (internal/state's "$follow$", its invariants
// there). It holds [FollowLease] throughout, so two followers of one
// database never run at once, and every token write is fenced by it.
//
// Where it starts, per MongoDB's $changeStream options
// (src/mongo/db/pipeline/document_source_change_stream.cpp: resumeAfter,
// startAfter and startAtOperationTime exclude one another, error 40674;
// resumeAfter an invalidate event is InvalidResumeToken):
//
//   - a stored token of a stream over the same collections: resumeAfter
//     it, so the first event is the one after the last applied;
//   - no token, one of other collections, or a token the server cannot
//     resume from (ChangeStreamHistoryLost 286: it left the oplog;
//     InvalidResumeToken 260): a cluster time is read first ($clusterTime
//     of a hello), then a full check and repair ([Checker.Repair]) runs,
//     then the stream opens at that time (startAtOperationTime): a change
//     made while the full pass ran is delivered and applied again (the
//     fixes are guarded and idempotent), none is missed;
//   - an invalidate event (the database dropped): the token is forgotten
//     and the follower starts over as without one.
//
// Updates are delivered with the document as it is now (fullDocument:
// updateLookup); with [FollowOptions.PreImages] also as it was
// (fullDocumentBeforeChange: whenAvailable, MongoDB 6.0+ with
// changeStreamPreAndPostImages on the child collections), which lets a
// deleted child's parent be recomputed alone instead of its rule rescanned.

// FollowLease is the name of the lease a follower of database db holds.
func FollowLease(db string) string { return "integrity-follow:" + db }

// FollowOptions configure [Checker.Follow].
type FollowOptions struct {
	// PreImages asks the stream for each change's pre-image (see above).
	PreImages bool
	// Applied, when set, is told each event's fixes once they are written
	// and its token stored.
	Applied func(*Applied)
	// FullPass, when set, is told why a full check and repair runs and,
	// once it finished, its report.
	FullPass func(reason string, rep *RepairReport)
	// Opened, when set, is told the collections watched each time the
	// stream opens, and whether it resumed from a stored token.
	Opened func(watched []string, resumed bool)
	// Retrying, when set, is told of a transient failure (a failover, a
	// lost connection) after which the follower starts again from the
	// stored token, and of the pause before it does.
	Retrying func(err error, wait time.Duration)
	// MaxAwait is how long the server waits for an event before it
	// answers an empty batch (default 1 s).
	MaxAwait time.Duration
}

// ChangeStreamsError is Follow's answer on a server without change
// streams: Capability is the probe's finding, with the server's answer.
type ChangeStreamsError struct {
	Database   string
	Capability probe.Capability
}

func (e *ChangeStreamsError) Error() string {
	return e.Message("check and repair on a schedule instead (docs/integrity.md)")
}

// Message is the error's message with instead (what to do without change
// streams, as the caller words it) at its end.
func (e *ChangeStreamsError) Message(instead string) string {
	return fmt.Sprintf("database %s: following changes needs change streams, which the server does not have (%s); %s", e.Database, e.Capability.Reason, instead)
}

// errHistoryLost: the stored token cannot be resumed from; the follower
// starts over with a full pass.
var errHistoryLost = errors.New("the change stream's history is lost")

// defaultMaxAwait is FollowOptions.MaxAwait's default.
const defaultMaxAwait = time.Second

// Follow applies the changes to the collections the rules read as they
// happen, until ctx ends or an error (see above). It needs
// Options.Leases, and a server with change streams: it probes them first
// ([probe.ChangeStreams]) and answers a *ChangeStreamsError without them,
// before taking its lease or writing anything.
func (c *Checker) Follow(ctx context.Context, opts FollowOptions) error {
	if c.opts.Leases == nil {
		return errors.New("follow: no lease acquirer (Options.Leases): two followers could run at once")
	}
	if len(c.watched()) == 0 {
		return errors.New("follow: no rule reads another collection (a mirror's source, an aggregate's children, a referenced collection): there is nothing to follow")
	}
	capab, err := probe.ChangeStreams(ctx, c.db)
	if err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	if !capab.Available {
		return &ChangeStreamsError{Database: c.db.Name(), Capability: capab}
	}
	return c.follow(ctx, opts)
}

// follow is Follow after the probe: under the follow lease, run the
// stream, starting over (with a full pass) whenever its history is lost.
func (c *Checker) follow(ctx context.Context, opts FollowOptions) error {
	if opts.MaxAwait <= 0 {
		opts.MaxAwait = defaultMaxAwait
	}
	f := &follower{c: c, opts: opts, store: state.New(c.db), watched: c.watched()}
	if len(f.watched) == 0 {
		return errors.New("follow: no rule reads another collection: there is nothing to follow")
	}
	return lease.With(ctx, c.opts.Leases, FollowLease(c.db.Name()), c.opts.LeaseWait, func(lctx context.Context) error {
		wait := retryFirst
		for {
			err := f.run(lctx)
			switch {
			case errors.Is(err, errHistoryLost):
				continue
			case !probe.Transient(err) || lctx.Err() != nil:
				return err
			}
			// A transient failure (a failover, a lost connection the
			// driver's own resume did not cover): start again from the
			// stored token, after a pause that grows while nothing is
			// applied.
			if f.progressed {
				wait, f.progressed = retryFirst, false
			}
			if opts.Retrying != nil {
				opts.Retrying(err, wait)
			}
			t := time.NewTimer(wait)
			select {
			case <-lctx.Done():
				t.Stop()
				return context.Cause(lctx)
			case <-t.C:
			}
			wait = min(2*wait, retryMax)
		}
	})
}

// The pauses of a follower between two attempts after transient failures.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// watched are the collections the rules read, sorted.
func (c *Checker) watched() []string {
	var out []string
	for _, r := range c.rules {
		for _, coll := range c.reads(r) {
			if !slices.Contains(out, coll) {
				out = append(out, coll)
			}
		}
	}
	slices.Sort(out)
	return out
}

type follower struct {
	c       *Checker
	opts    FollowOptions
	store   *state.Store
	watched []string
	lost    string // why the last stream could not go on
	// progressed: a token was stored since the last transient failure.
	progressed bool
	// passed: a full pass ran and no token was stored since.
	passed bool
}

// save stores tok (fenced by the follow lease ctx carries).
func (f *follower) save(ctx context.Context, tok *state.FollowToken) error {
	if err := f.store.SaveFollowToken(ctx, tok); err != nil {
		return err
	}
	f.progressed, f.passed = true, false
	return nil
}

// run opens the stream where the stored token says (or after a full pass)
// and applies its events until an error.
func (f *follower) run(ctx context.Context) error {
	tok, err := f.store.FollowTokenOf(ctx)
	if err != nil {
		return err
	}
	reason := f.lost
	switch {
	case tok == nil && reason == "":
		reason = "no resume token is stored"
	case tok != nil && !tok.Covers(f.watched):
		reason = fmt.Sprintf("the stored resume token's stream watched %v, the rules read %v", tok.Watched, f.watched)
	}
	var at *bson.Timestamp
	if reason != "" {
		ts, err := f.c.clusterTime(ctx)
		if err != nil {
			return err
		}
		rep, err := f.c.Repair(ctx, false)
		if err != nil {
			return fmt.Errorf("follow: the full check and repair (%s): %w", reason, err)
		}
		if f.opts.FullPass != nil {
			f.opts.FullPass(reason, rep)
		}
		at, tok, f.passed = &ts, &state.FollowToken{Watched: f.watched}, true
	}
	f.lost = ""
	cs, err := f.open(ctx, tok, at)
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close(context.WithoutCancel(ctx)) }()
	if f.opts.Opened != nil {
		f.opts.Opened(f.watched, at == nil)
	}
	if rt := cs.ResumeToken(); at != nil && rt != nil && cs.RemainingBatchLength() == 0 {
		// The first batch is empty: its postBatchResumeToken is after
		// every change since at (invariant 2: the full pass finished).
		tok.Token = slices.Clone(rt)
		if err := f.save(ctx, tok); err != nil {
			return err
		}
	}
	return f.events(ctx, cs, tok)
}

// open sends the stream's aggregate: resumeAfter the stored token, or
// startAtOperationTime at.
func (f *follower) open(ctx context.Context, tok *state.FollowToken, at *bson.Timestamp) (*mongo.ChangeStream, error) {
	o := options.ChangeStream().SetFullDocument(options.UpdateLookup).SetMaxAwaitTime(f.opts.MaxAwait)
	if f.opts.PreImages {
		o.SetFullDocumentBeforeChange(options.WhenAvailable)
	}
	if at != nil {
		o.SetStartAtOperationTime(at)
	} else {
		o.SetResumeAfter(tok.Token)
	}
	cs, err := f.c.db.Watch(ctx, followPipeline(f.watched), o)
	if err != nil {
		return nil, f.streamErr(ctx, err)
	}
	return cs, nil
}

// followPipeline keeps the events of the watched collections (a rename
// from or to one) and the database's own.
func followPipeline(watched []string) mongo.Pipeline {
	in := bson.D{{Key: "$in", Value: watched}}
	return mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "ns.coll", Value: in}},
		bson.D{{Key: "to.coll", Value: in}},
		bson.D{{Key: "operationType", Value: bson.D{{Key: "$in", Value: bson.A{"dropDatabase", "invalidate"}}}}},
	}}}}}}
}

// streamErr sorts an error of the stream: a lost history forgets the
// token (errHistoryLost: start over), a refusal is the missing capability.
func (f *follower) streamErr(ctx context.Context, err error) error {
	if probe.ChangeStreamHistoryLost(err) && f.passed {
		// The cluster time read before the full pass has left the oplog
		// before a token was stored: another full pass would end the
		// same way.
		return fmt.Errorf("follow: the oplog no longer holds the cluster time read before the full check and repair, which took longer than the oplog's window: enlarge the oplog (or restrict the rules to fewer collections): %w", err)
	}
	if probe.ChangeStreamHistoryLost(err) {
		if ferr := f.store.ForgetFollowToken(ctx); ferr != nil {
			return ferr
		}
		f.lost = "the server cannot resume from the stored token: " + probe.ServerMessage(err)
		return errHistoryLost
	}
	if capab, ok := probe.ChangeStreamRefusal(err); ok {
		return &ChangeStreamsError{Database: f.c.db.Name(), Capability: capab}
	}
	return fmt.Errorf("follow: change stream on %s: %w", f.c.db.Name(), err)
}

// events applies the stream's events one by one, storing the token after
// each; an empty batch stores the stream's postBatchResumeToken when it
// moved (every event before it was applied), so a quiet stream's token
// stays inside the oplog.
func (f *follower) events(ctx context.Context, cs *mongo.ChangeStream, tok *state.FollowToken) error {
	for {
		if cs.TryNext(ctx) {
			ev := cs.Current
			if op, _ := ev.Lookup("operationType").StringValueOK(); op == "invalidate" {
				if err := f.store.ForgetFollowToken(ctx); err != nil {
					return err
				}
				f.lost = "the stream was invalidated (the database was dropped)"
				return errHistoryLost
			}
			a, err := f.c.ApplyChange(ctx, ev)
			if err != nil {
				return err
			}
			id, ok := ev.Lookup("_id").DocumentOK()
			if !ok {
				return fmt.Errorf("follow: a change event without its resume token (_id): %s", ev)
			}
			tok.Token, tok.Events = slices.Clone(id), tok.Events+1
			if err := f.save(ctx, tok); err != nil {
				return err
			}
			if f.opts.Applied != nil {
				f.opts.Applied(a)
			}
			continue
		}
		if err := cs.Err(); err != nil {
			return f.streamErr(ctx, err)
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if rt := cs.ResumeToken(); rt != nil && !bytes.Equal(rt, tok.Token) {
			tok.Token = slices.Clone(rt)
			if err := f.save(ctx, tok); err != nil {
				return err
			}
		}
	}
}

// clusterTimeSlack is how far before the server's clock a follower starts
// on a server that reports no cluster time.
const clusterTimeSlack = time.Minute

// clusterTime is the cluster time to start a stream at after a full
// pass: hello's $clusterTime.clusterTime (every replica set member and
// mongos reports it; MongoDB's jstests/change_streams start at it so),
// else its operationTime. A server reporting neither (the FerretDB servers
// mongomig is tested on) gets its clock (hello's localTime) less
// clusterTimeSlack: MongoDB's cluster time counts the seconds of its
// members' clocks, so that start is not after any change made since, and
// starting earlier only delivers changes again.
func (c *Checker) clusterTime(ctx context.Context) (bson.Timestamp, error) {
	reply, err := c.db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Raw()
	if err != nil {
		return bson.Timestamp{}, fmt.Errorf("follow: read the cluster time (hello): %w", err)
	}
	for _, path := range [][]string{{"$clusterTime", "clusterTime"}, {"operationTime"}} {
		if v, err := reply.LookupErr(path...); err == nil && v.Type == bson.TypeTimestamp {
			t, i := v.Timestamp()
			return bson.Timestamp{T: t, I: i}, nil
		}
	}
	local, ok := reply.Lookup("localTime").TimeOK()
	if !ok {
		return bson.Timestamp{}, fmt.Errorf("follow: the server reports no cluster time and no localTime in hello")
	}
	return bson.Timestamp{T: uint32(local.Add(-clusterTimeSlack).Unix())}, nil
}
