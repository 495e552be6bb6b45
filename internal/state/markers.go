package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
)

// A server-side backfill that has to mark documents partway (a server
// without pipeline updates) keeps one nonce per collection and target,
// "<coll>$markers$<target>", and writes it into every marker: a backfill
// resumes only from a marker carrying it, so a well-formed marker that
// arrived in application data is never trusted by a backfill. The nonce is
// inserted, never replaced (the first backfill of the target wins), and
// removed with the plans and range checkpoints (DropRanges, Forget).

// Markers is the stored nonce of a collection's marker plan.
type Markers struct {
	ID        string    `bson:"_id"`
	Target    int64     `bson:"target"`
	Nonce     string    `bson:"nonce"`
	CreatedAt time.Time `bson:"createdAt"`
}

func markersKey(coll string, target int64) string { return fmt.Sprintf("%s$markers$%d", coll, target) }

// MarkerNonce returns the nonce of coll's markers for target: "" when
// none is stored and !create; with create, a new random one is inserted
// first (fenced by the lease ctx carries) unless another backfill stored
// one, which is returned.
func (s *Store) MarkerNonce(ctx context.Context, coll string, target int64, create bool) (string, error) {
	var m Markers
	err := s.c.FindOne(ctx, byID(markersKey(coll, target))).Decode(&m)
	switch {
	case err == nil && m.Nonce != "":
		return m.Nonce, nil
	case err == nil:
		return "", fmt.Errorf("the marker nonce %s in %s is empty: it was not written by mongomig; remove that document and run backfill again", markersKey(coll, target), Collection)
	case !errors.Is(err, mongo.ErrNoDocuments):
		return "", fmt.Errorf("read the marker nonce of %s: %w", coll, err)
	case !create:
		return "", nil
	}
	m = Markers{ID: markersKey(coll, target), Target: target, Nonce: bsonx.RandomHex(16), CreatedAt: time.Now()}
	err = fenced(ctx, func() error {
		_, err := s.c.InsertOne(ctx, m)
		return err
	})
	if mongo.IsDuplicateKeyError(err) {
		return s.MarkerNonce(ctx, coll, target, false)
	}
	if err != nil {
		return "", fmt.Errorf("store the marker nonce of %s: %w", coll, err)
	}
	return m.Nonce, nil
}
