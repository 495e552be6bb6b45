package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// An expired backlog's deletion (internal/expiry states the
// protocol): "$expire$<version>$<collection>$<index>", the documents of
// collection that the TTL index named index of migration version would
// expire at once, deleted by `up` before it builds (or lowers) the index.
// A collection name never contains '$', so the key is no collection's
// checkpoint; an index name may, but it comes last. It is written only by
// `up` under the migration lock, every write fenced by it, as a $set of
// its own fields. Cutoff is fixed by the first write: a resumed deletion
// removes what the first one counted, not what has expired since (the
// TTL monitor's part). Deleted and Batches only grow; Done is set once no
// document older than Cutoff is left.

// ExpiryProgress is the stored progress of one backlog deletion.
type ExpiryProgress struct {
	ID         string    `bson:"_id"`
	Version    int64     `bson:"version"`
	Collection string    `bson:"collection"`
	Index      string    `bson:"index"`
	Cutoff     time.Time `bson:"cutoff"`
	Deleted    int64     `bson:"deleted"`
	Batches    int64     `bson:"batches"`
	Done       bool      `bson:"done"`
	UpdatedAt  time.Time `bson:"updatedAt"`
}

// ExpiryKey is the _id of the backlog deletion of coll's index of
// migration version.
func ExpiryKey(version int64, coll, index string) string {
	return fmt.Sprintf("$expire$%d$%s$%s", version, coll, index)
}

// Started reports whether the deletion was begun (its cutoff is fixed).
func (p *ExpiryProgress) Started() bool { return !p.Cutoff.IsZero() }

// ExpiryProgressOf reads the progress of the backlog deletion of coll's
// index of migration version: a new one (not started) when none is stored.
func (s *Store) ExpiryProgressOf(ctx context.Context, version int64, coll, index string) (ExpiryProgress, error) {
	key := ExpiryKey(version, coll, index)
	p := ExpiryProgress{}
	err := s.c.FindOne(ctx, byID(key)).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ExpiryProgress{ID: key, Version: version, Collection: coll, Index: index}, nil
	}
	if err != nil {
		return p, fmt.Errorf("read the progress of the expired backlog of %s (index %s, migration %d): %w", coll, index, version, err)
	}
	return p, nil
}

// SaveExpiryProgress writes p's fields (fenced by the migration lock ctx
// carries), creating the document if needed.
func (s *Store) SaveExpiryProgress(ctx context.Context, p *ExpiryProgress) error {
	p.UpdatedAt = time.Now()
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(p.ID), bson.D{{Key: "$set", Value: bson.D{
			{Key: "version", Value: p.Version}, {Key: "collection", Value: p.Collection}, {Key: "index", Value: p.Index},
			{Key: "cutoff", Value: p.Cutoff}, {Key: "deleted", Value: p.Deleted}, {Key: "batches", Value: p.Batches},
			{Key: "done", Value: p.Done}, {Key: "updatedAt", Value: p.UpdatedAt},
		}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the progress of the expired backlog of %s (index %s, migration %d): %w", p.Collection, p.Index, p.Version, err)
	}
	return nil
}

// ForgetExpiry removes the progress of every backlog deletion of
// migration version (down, after reverting it).
func (s *Store) ForgetExpiry(ctx context.Context, version int64) error {
	return s.forgetPrefix(ctx, fmt.Sprintf("^\\$expire\\$%d\\$", version), fmt.Sprintf("the progress of the expired backlogs of migration %d", version))
}
