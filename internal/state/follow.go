package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A follower's resume token (pkg/integrity, repair --follow): one document,
// "$follow$", per database. A collection name never contains '$', so the
// key is no collection's checkpoint, and it matches neither "$repair$" nor
// "$run$": no other protocol's removal touches it.
//
// Invariants:
//
//  1. One writer: a follower holding the database's follow lease
//     (integrity.FollowLease); every write is fenced by the lease its
//     context carries and sent with majority write concern, so a follower
//     that lost its lease writes nothing, and a token survives a failover.
//  2. The stored token is a point of the change stream at or before the
//     first change whose fixes are not all applied: the resume token of an
//     event once its fixes (and every earlier event's) were written, or the
//     stream's postBatchResumeToken once every event before it was, or the
//     first token of a stream opened at a cluster time taken before a full
//     check and repair that finished. Resuming after it misses nothing.
//  3. Watched names the collections the token's stream covered. A token is
//     only resumed from by a follower watching the same collections: a
//     follower with rules on another collection has missed its changes
//     and starts with a full pass (the caller compares, [FollowToken.Covers]).
//  4. Writes are a $set of the document's fields (an upsert); the one
//     removal ([Store.ForgetFollowToken]) is the follower's, under the same
//     lease, when the server says the token's history is lost.

// FollowKey is the _id of the follower's token document.
const FollowKey = "$follow$"

// FollowToken is a follower's stored position.
type FollowToken struct {
	ID string `bson:"_id"`
	// Token is the change stream's resume token, as the server gave it.
	Token bson.Raw `bson:"token"`
	// Watched are the collections the stream covers, sorted.
	Watched []string `bson:"watched"`
	// Events counts the events applied since the token was first stored.
	Events    int64     `bson:"events"`
	UpdatedAt time.Time `bson:"updatedAt"`
}

// Covers reports whether the token's stream covered exactly watched
// (invariant 3).
func (t *FollowToken) Covers(watched []string) bool {
	w := slices.Clone(watched)
	slices.Sort(w)
	return slices.Equal(t.Watched, w)
}

// FollowTokenOf reads the stored token: nil when none is stored.
func (s *Store) FollowTokenOf(ctx context.Context) (*FollowToken, error) {
	var t FollowToken
	err := s.c.FindOne(ctx, byID(FollowKey)).Decode(&t)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the follower's resume token: %w", err)
	}
	return &t, nil
}

// SaveFollowToken stores t (fenced by the lease ctx carries, invariant 1),
// creating the document if needed.
func (s *Store) SaveFollowToken(ctx context.Context, t *FollowToken) error {
	if len(t.Token) == 0 {
		return errors.New("save the follower's resume token: no token")
	}
	t.ID, t.UpdatedAt = FollowKey, time.Now()
	t.Watched = slices.Clone(t.Watched)
	slices.Sort(t.Watched)
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(FollowKey), bson.D{{Key: "$set", Value: bson.D{
			{Key: "token", Value: t.Token}, {Key: "watched", Value: t.Watched},
			{Key: "events", Value: t.Events}, {Key: "updatedAt", Value: t.UpdatedAt},
		}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the follower's resume token: %w", err)
	}
	return nil
}

// ForgetFollowToken removes the stored token (fenced, invariant 4).
func (s *Store) ForgetFollowToken(ctx context.Context) error {
	return fenced(ctx, func() error {
		if _, err := s.c.DeleteOne(ctx, byID(FollowKey)); err != nil {
			return fmt.Errorf("remove the follower's resume token: %w", err)
		}
		return nil
	})
}
