package probe

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// changeStreamWait bounds the wait for the probe's insert to come out of
// the change stream.
const changeStreamWait = 5 * time.Second

// probeChangeStreams opens a change stream on the scratch collection,
// inserts a document and waits for its event.
func probeChangeStreams(ctx context.Context, coll *mongo.Collection) (Capability, error) {
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if refused, cerr := classify(err, "change stream"); cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	defer func() { _ = cs.Close(context.WithoutCancel(ctx)) }()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 3}}); err != nil {
		return Capability{}, fmt.Errorf("probe: insert into scratch collection %s: %w", coll.Name(), err)
	}
	wctx, cancel := context.WithTimeout(ctx, changeStreamWait)
	defer cancel()
	for cs.Next(wctx) {
		var ev struct {
			Op  string `bson:"operationType"`
			Key struct {
				ID any `bson:"_id"`
			} `bson:"documentKey"`
		}
		if err := cs.Decode(&ev); err != nil {
			return Capability{}, fmt.Errorf("probe: decode a change event: %w", err)
		}
		if ev.Op == "insert" && ev.Key.ID == int32(3) {
			return Capability{Available: true}, nil
		}
	}
	if ctx.Err() != nil {
		return Capability{}, fmt.Errorf("probe change stream: %w", ctx.Err())
	}
	if err := cs.Err(); err != nil && wctx.Err() == nil {
		refused, cerr := classify(err, "change stream")
		return refused, cerr
	}
	return Capability{Reason: fmt.Sprintf("a change stream opened but delivered no event in %s for an insert", changeStreamWait)}, nil
}

// ChangeStreams probes change streams alone, in a scratch database of
// its own (named as [Probe]'s, dropped before returning): what a
// long-running follower asks before it opens one, without the rest of
// Probe's work.
func ChangeStreams(ctx context.Context, db *mongo.Database) (Capability, error) {
	scratch := db.Client().Database(scratchName())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = scratch.Drop(dctx)
	}()
	err := scratch.RunCommand(ctx, bson.D{{Key: "create", Value: scratchCollection}}).Err()
	if refused, cerr := classify(err, "create"); cerr != nil || refused.Reason != "" {
		if cerr != nil {
			return Capability{}, fmt.Errorf("probe: create scratch collection %s.%s: %w", scratch.Name(), scratchCollection, cerr)
		}
		return refused, nil
	}
	return probeChangeStreams(ctx, scratch.Collection(scratchCollection))
}

// Change stream error codes (MongoDB's src/mongo/base/error_codes.yml).
const (
	// CodeInvalidResumeToken: a token the server cannot resume from (one
	// of an invalidate event given as resumeAfter, or not a token of this
	// stream).
	CodeInvalidResumeToken = 260
	// CodeChangeStreamHistoryLost: the resume point is no longer in the
	// oplog (NonResumableChangeStreamError).
	CodeChangeStreamHistoryLost = 286
)

// ChangeStreamHistoryLost reports whether err is a server's answer that
// a change stream cannot resume from the token it was given: the history
// is lost (ChangeStreamHistoryLost, 286) or the token is not one it can
// resume from (InvalidResumeToken, 260). Either way only a full pass
// finds what happened since.
func ChangeStreamHistoryLost(err error) bool {
	return HasCode(err, CodeChangeStreamHistoryLost, CodeInvalidResumeToken)
}

// ChangeStreamRefusal sorts the error of opening a change stream: a
// server's refusal (FerretDB v1 answers a database's stream with
// FailedToParse 9, FerretDB 2 any stream with CommandNotSupported 115) is
// an unavailable capability with the server's answer, true; a lost
// history, a network failure, a timeout or a cancellation is not (false).
func ChangeStreamRefusal(err error) (Capability, bool) {
	if err == nil || ChangeStreamHistoryLost(err) || Transient(err) {
		return Capability{}, false
	}
	c, cerr := classify(err, "change stream")
	return c, cerr == nil && c.Reason != ""
}
