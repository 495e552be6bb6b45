package lease

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// Transactions reports whether the server runs multi-document
// transactions: a replica-set member (hello's setName) or a mongos (msg
// "isdbgrid") with sessions (logicalSessionTimeoutMinutes). A standalone
// server and FerretDB have none.
func Transactions(ctx context.Context, db *mongo.Database) (bool, error) {
	var hello struct {
		SetName  string `bson:"setName"`
		Msg      string `bson:"msg"`
		Sessions *int64 `bson:"logicalSessionTimeoutMinutes"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return false, fmt.Errorf("ask the server for transactions: %w", err)
	}
	return (hello.SetName != "" || hello.Msg == "isdbgrid") && hello.Sessions != nil, nil
}

// Transact fences, then runs fn in one transaction (majority write
// concern, snapshot read concern) that first updates this acquisition's
// lease document, matched on its token. A takeover deletes that document:
// either it committed first, and the update matches nothing (a final
// [ErrLost], fn never runs), or it comes later, and MongoDB lets only one
// of the two writes to the document succeed ("first updater wins", see
// jstests/core/txns/write_conflicts.js in mongodb/mongo, the update-delete
// case; a single-document write meeting a transaction's write waits for it,
// jstests/core/txns/write_conflicts_with_non_txns.js). A read of the
// token would not do: snapshot isolation does not order a read against a
// concurrent delete. So fn's writes commit only while the lease is ours,
// even if this process was paused between its fence and the commit.
//
// Use it only where [Transactions] is true: other servers refuse
// startTransaction (FerretDB: FailedToParse).
func (h *Held) Transact(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := h.Fence(ctx); err != nil {
		return err
	}
	return h.transact(ctx, fn)
}

// transact is Transact without the fence before it.
func (h *Held) transact(ctx context.Context, fn func(ctx context.Context) error) error {
	sess, err := h.coll.Database().Client().StartSession()
	if err != nil {
		return fmt.Errorf("start a session for the fenced transaction: %w", err)
	}
	defer sess.EndSession(context.WithoutCancel(ctx))
	opts := options.Transaction().SetWriteConcern(writeconcern.Majority()).SetReadConcern(readconcern.Snapshot())
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		res, err := h.coll.UpdateOne(sc, h.mine(), bson.D{{Key: "$inc", Value: bson.D{{Key: "fencedWrites", Value: 1}}}})
		switch {
		case err != nil:
			return nil, fmt.Errorf("fence the transaction on the lease %s: %w", h.name, err)
		case res.MatchedCount == 0:
			return nil, h.lose(&LostError{Name: h.name, Reason: LostTokenGone})
		}
		return nil, fn(sc)
	}, opts)
	return err
}
